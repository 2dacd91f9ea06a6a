// Confirmation of risky operations: one binding for all three paths. A confirmation token (for
// hosts without elicitation) and an MRTR requestState (for 2026-07-28 hosts with elicitation) are
// the same kind of value: HMAC-signed, expiring, bound to the operation, its exact normalised
// params, the key and what the preview's facts showed, and single use through a store of spent nonces. Nothing is kept per token
// until it is spent, so any replica that shares the secret and the store can honour it once.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { matchesPattern, type Config } from '../model/config.js';
import type { Params, Risk } from '../model/types.js';
import { InputError } from '../model/errors.js';
import { forwardNow } from './forward-now.js';

export const TOKEN_TTL_MS = 5 * 60 * 1000;
/** An elicitation waits on a person; the state that carries it lives longer than a token. */
export const REQUEST_STATE_TTL_MS = 10 * 60 * 1000;

/** What a signed value is for: a token never passes as a requestState, nor the reverse. */
export type ConfirmationKind = 'token' | 'state';
const PREFIX: Record<ConfirmationKind, string> = { token: 'ct_', state: 'rs_' };
const TTL: Record<ConfirmationKind, number> = { token: TOKEN_TTL_MS, state: REQUEST_STATE_TTL_MS };

/** A value's first part as this server issues it: its prefix and its nonce (16 random bytes, base64url). */
const ISSUED_HEAD: Record<ConfirmationKind, RegExp> = { token: /^ct_[\w-]{1,64}$/, state: /^rs_[\w-]{1,64}$/ };

/**
 * The id the spent store knows a value by (`token:<nonce>`), if the value has the shape this server
 * issues (not that it is genuine: only `redeem` says that); undefined for anything else.
 */
export function issuedIdOf(kind: ConfirmationKind, value: string): string | undefined {
  const head = value.split('.', 1)[0] ?? '';
  return ISSUED_HEAD[kind].test(head) ? `${kind}:${head}` : undefined;
}

/** `mismatch`: issued for another call, and spent by this one; `spent-mismatch`: the same, but spent before (its write may have run). */
export type Redemption = 'ok' | 'unknown' | 'expired' | 'mismatch' | 'spent-mismatch' | 'spent';

/**
 * Remembers spent nonces until they expire. `consume` is true only the first time, across every
 * replica that shares it. `expiresAt`: when its value is past for good, by the spending process's
 * clock that never goes back (forward-now.ts forwardNow): its expiry plus the lead it carries.
 */
export interface SpentStore {
  consume(nonce: string, expiresAt: number): Promise<boolean>;
}

/**
 * The embedded store, for one process (stdio, or a single HTTP replica). Full, it drops the nonces
 * past `expiresAt` by the clock that never goes back: by the system clock, one set back after the
 * drop made a value issued while the other led good again, and it was honoured twice.
 */
export class MemorySpentStore implements SpentStore {
  private readonly spent = new Map<string, number>();
  constructor(
    private readonly now: () => number = forwardNow,
    private readonly maxEntries = 100_000,
  ) {}

  async consume(nonce: string, expiresAt: number): Promise<boolean> {
    if (this.spent.has(nonce)) return false;
    if (this.spent.size >= this.maxEntries) {
      const now = this.now();
      for (const [spent, until] of this.spent) if (until <= now) this.spent.delete(spent);
      // Bounded memory, failing closed: forgetting a nonce that is still valid would let it run again.
      if (this.spent.size >= this.maxEntries)
        throw new InputError('Too many confirmations were used in the last few minutes; nothing was done. Try again in a few minutes.');
    }
    this.spent.set(nonce, expiresAt);
    return true;
  }
}

export interface ConfirmationOptions {
  /** The HMAC secret: at least 32 bytes; shared by every replica that must honour the same values. */
  secret: Uint8Array;
  store: SpentStore;
  now?: () => number;
  /**
   * This process's clock that never goes back (forward-now.ts forwardNow; `now` where only that is
   * given): a value also expires by it, so a system clock set back after it was issued does not
   * lengthen its life.
   */
  forward?: () => number;
}

export class Confirmations {
  private readonly now: () => number;
  private readonly forward: () => number;
  constructor(private readonly options: ConfirmationOptions) {
    if (options.secret.length < 32) throw new RangeError('the confirmation secret must be at least 32 bytes');
    this.now = options.now ?? Date.now;
    this.forward = options.forward ?? options.now ?? forwardNow;
  }

  /**
   * A signed value for this operation, these params and this key, and `shown`: what of the
   * preview's facts the yes is bound to (statement.ts `bound`). `shownAt`: when what it confirms
   * was put together (the journal read for its warning), which `issuedAt` gives back; never later than now.
   */
  issue(
    kind: ConfirmationKind,
    keyFingerprint: string,
    operationId: string,
    params: Params,
    shownAt = this.now(),
    shown = '',
  ): { value: string; expiresAt: number } {
    const nonce = randomBytes(16).toString('base64url');
    const now = this.now();
    const expiresAt = Math.min(shownAt, now) + TTL[kind];
    // How far the clock that never goes back stood ahead of the system clock: the value's expiry by that clock.
    const lead = Math.max(0, this.forward() - now);
    const head = `${PREFIX[kind]}${nonce}.${expiresAt.toString(36)}${lead > 0 ? `-${lead.toString(36)}` : ''}`;
    const facts = this.shownMac(kind, head, shown);
    const macs = [this.mac(kind, authenticHead(head, facts), keyFingerprint), this.mac(kind, head, keyFingerprint, operationId, params), facts];
    return { value: `${head}.${macs.join('.')}`, expiresAt };
  }

  /**
   * Checks a value against the call it came back with, and spends it. A genuine value shown with
   * other params is spent too: a token is not trusted again once it was misused.
   */
  async redeem(kind: ConfirmationKind, value: string, keyFingerprint: string, operationId: string, params: Params): Promise<Redemption> {
    const parts = value.split('.');
    if (parts.length !== 5 || !value.startsWith(PREFIX[kind])) return 'unknown';
    const [nonce, expiry, authentic, binding, facts] = parts as [string, string, string, string, string];
    const head = `${nonce}.${expiry}`;
    if (!safeEqual(authentic, this.mac(kind, authenticHead(head, facts), keyFingerprint))) return 'unknown';
    const [expiresAt, lead] = expiryOf(expiry);
    if (!(expiresAt > this.now() && expiresAt + lead > this.forward())) return 'expired';
    // Kept until the value is past by the clock that never goes back: by the system clock alone it may come good again.
    const first = await this.options.store.consume(`${kind}:${nonce}`, expiresAt + lead);
    if (!safeEqual(binding, this.mac(kind, head, keyFingerprint, operationId, params))) return first ? 'mismatch' : 'spent-mismatch';
    return first ? 'ok' : 'spent';
  }

  /** Whether a value that redeemed `ok` was issued for these facts (`shown`, as `issue` took them): else its yes was to something else. */
  showed(kind: ConfirmationKind, value: string, shown: string): boolean {
    const [nonce = '', expiry = '', , , facts = ''] = value.split('.');
    return safeEqual(facts, this.shownMac(kind, `${nonce}.${expiry}`, shown));
  }

  /** What names a value in the write journal (its nonce, as the spent store knows it): not the value, which is a yes. */
  idOf(kind: ConfirmationKind, value: string): string {
    return `${kind}:${value.split('.')[0] ?? ''}`;
  }

  /** When a value that redeemed `ok` was issued: what its yes was given to had been shown by then. */
  issuedAt(kind: ConfirmationKind, value: string): number {
    return expiryOf(value.split('.')[1] ?? '')[0] - TTL[kind];
  }

  private mac(kind: ConfirmationKind, head: string, keyFingerprint: string, operationId?: string, params?: Params): string {
    const bound = operationId === undefined ? '' : `\n${operationId}\n${canonicalJson(params)}`;
    return this.sign(`engage-mcp confirmation ${kind}\n${head}\n${keyFingerprint}${bound}`);
  }

  /** The facts' part: under its own label, so no facts text can pass for another part's input. */
  private shownMac(kind: ConfirmationKind, head: string, shown: string): string {
    return this.sign(`engage-mcp confirmation ${kind} facts\n${head}\n${shown}`);
  }

  private sign(text: string): string {
    return createHmac('sha256', this.options.secret).update(text).digest().subarray(0, 16).toString('base64url');
  }
}

/** A value's expiry part: when it expires by the system clock, and how far the clock that never goes back led it then (none: 0). */
function expiryOf(part: string): [number, number] {
  const [expiry = '', lead = '0'] = part.split('-');
  return [parseInt(expiry, 36), parseInt(lead, 36)];
}

/**
 * What the first MAC covers: the head and the facts' MAC, so a value altered or cut in its facts
 * part is not genuine (it is not "what the preview showed has changed"). No part holds a dot.
 */
const authenticHead = (head: string, facts: string) => `${head}.${facts}`;

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
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

/**
 * ENGAGE_CONFIRM: an operation it names with `-` is not gated, one it names is; otherwise its risk
 * level decides. Reads never are. Named both ways, its own name decides over a wildcard
 * (`-campaign.*,campaign.send` asks before campaign.send; `campaign.*,-campaign.create` does not
 * before campaign.create), and otherwise it is gated: an owner's question is never dropped on a doubt.
 */
export function needsConfirmation(policy: Pick<Config, 'confirm' | 'confirmPatterns'>, op: { id: string; risk: Risk }): boolean {
  if (op.risk === 'safe') return false;
  const gate = howNamed(policy.confirmPatterns.gate, op.id);
  const skip = howNamed(policy.confirmPatterns.skip, op.id);
  if (gate || skip) return gate !== undefined && !(skip === 'by name' && gate === 'by wildcard');
  return policy.confirm === 'all' || (policy.confirm === 'destructive' && op.risk === 'destructive');
}

/** Whether `patterns` name the operation by its own name, only by a wildcard, or not at all. */
function howNamed(patterns: readonly string[], operationId: string): 'by name' | 'by wildcard' | undefined {
  if (patterns.includes(operationId)) return 'by name';
  return patterns.some((pattern) => matchesPattern(pattern, operationId)) ? 'by wildcard' : undefined;
}
