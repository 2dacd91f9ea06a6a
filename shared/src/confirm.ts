// Confirmation tokens for hosts without elicitation. A token is a random handle to a record kept
// in this process: single use, bound to one operation, its exact (normalised) params and the key,
// and short-lived. Nothing about it can be forged or reused.
import { createHash, randomBytes } from 'node:crypto';
import type { ConfirmMode } from './config.js';
import type { Params, Risk } from './catalog.js';

export const TOKEN_TTL_MS = 5 * 60 * 1000;
const MAX_PENDING = 1_000;

interface Pending {
  operationId: string;
  fingerprint: string;
  expiresAt: number;
}

export type Redemption = 'ok' | 'unknown' | 'expired' | 'mismatch';

export class ConfirmationStore {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly keyFingerprint: string,
    private readonly now: () => number = Date.now,
  ) {}

  issue(operationId: string, params: Params): { token: string; expiresAt: number } {
    this.sweep();
    const token = `ct_${randomBytes(18).toString('base64url')}`;
    const expiresAt = this.now() + TOKEN_TTL_MS;
    this.pending.set(token, { operationId, fingerprint: this.fingerprint(operationId, params), expiresAt });
    return { token, expiresAt };
  }

  /** Spends the token whatever the outcome: a token shown with other params is not trusted again. */
  redeem(token: string, operationId: string, params: Params): Redemption {
    const entry = this.pending.get(token);
    if (!entry) return 'unknown';
    this.pending.delete(token);
    if (entry.expiresAt <= this.now()) return 'expired';
    if (entry.operationId !== operationId || entry.fingerprint !== this.fingerprint(operationId, params)) return 'mismatch';
    return 'ok';
  }

  private fingerprint(operationId: string, params: Params): string {
    return createHash('sha256').update(`${this.keyFingerprint}\n${operationId}\n${canonicalJson(params)}`).digest('base64url');
  }

  private sweep(): void {
    const now = this.now();
    for (const [token, entry] of this.pending) if (entry.expiresAt <= now) this.pending.delete(token);
    // Bounded memory: the oldest pending tokens go first.
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string);
  }
}

/** JSON with sorted keys, so {a,b} and {b,a} are the same params. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function keyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('base64url');
}

export function needsConfirmation(mode: ConfirmMode, op: { risk: Risk }): boolean {
  if (mode === 'none' || op.risk === 'safe') return false;
  return mode === 'all' || op.risk === 'destructive';
}
