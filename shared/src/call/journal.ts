// The write journal: what this server sent lately, per key. The claim stage reads and marks it in
// one synchronous step (never twice), previews read it (an identical write sent before is named),
// and catalogs read what was written here for facts the API cannot show.
import { createHash } from 'node:crypto';
import type { Outcome, Params, WrittenBefore } from '../model/types.js';
import { jsonLength } from '../safe/render.js';
import { canonicalJson } from './confirmations.js';

const JOURNAL_ENTRIES = 200;
const JOURNAL_ENTRY_CHARS = 64 * 1024;
/** How long a write's attempt is remembered, and how many: enough to catch a host's retry after a timeout. */
const ATTEMPT_MEMORY_MS = 30 * 60 * 1000;
const ATTEMPTS_KEPT = 20_000;

/** How a write this server sent ended: still running, carried out, unknown (may have been), or refused (nothing was done). */
export type AttemptOutcome = 'in-flight' | Extract<Outcome, 'done' | 'unknown' | 'refused'>;
export interface Attempt {
  at: number;
  outcome: AttemptOutcome;
}

/**
 * What this server carried out lately (a bounded list, newest first), for facts the API cannot
 * show, and how each exact write's last attempt ended. Everything is kept per key fingerprint: a
 * server that serves many tenants never shows one tenant's writes to another.
 */
export class WriteJournal {
  private readonly entries: Array<{ keyId: string; operationId: string; params: Params; data: unknown }> = [];
  /**
   * The last attempt of each exact write (key, operation and normalised params, hashed), oldest
   * first: writes that went out (in flight, done, unknown) apart from those the API refused, so
   * that a flood of refused attempts (made-up keys, in remote mode) never pushes out the memory
   * of a write that was sent.
   */
  private readonly sent = new Map<string, Attempt>();
  private readonly refused = new Map<string, Attempt>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes a write's attempt; `in-flight` when it is sent, then how it ended. */
  attempt(keyId: string, operationId: string, params: Params, outcome: AttemptOutcome): void {
    const key = attemptKey(keyId, operationId, params);
    const before = this.sent.get(key) ?? this.refused.get(key);
    this.sent.delete(key); // re-inserted: each map stays in order of last use
    this.refused.delete(key);
    const into = outcome === 'refused' ? this.refused : this.sent;
    into.set(key, { at: outcome === 'in-flight' ? this.now() : (before?.at ?? this.now()), outcome });
    this.trim(into);
  }

  /** The last attempt of exactly this write within the last half hour, if any. */
  lastAttempt(keyId: string, operationId: string, params: Params): Attempt | undefined {
    const key = attemptKey(keyId, operationId, params);
    const found = this.sent.get(key) ?? this.refused.get(key);
    return found && found.at > this.now() - ATTEMPT_MEMORY_MS ? found : undefined;
  }

  private trim(attempts: Map<string, Attempt>): void {
    for (const [old, { at }] of attempts) {
      if (attempts.size <= ATTEMPTS_KEPT && at > this.now() - ATTEMPT_MEMORY_MS) break;
      attempts.delete(old);
    }
  }

  /** Keeps the params and the answer's top-level plain fields (its id): the answer may be anything. */
  record(keyId: string, operationId: string, params: Params, data: unknown): void {
    const fields =
      typeof data === 'object' && data !== null && !Array.isArray(data)
        ? Object.entries(data).filter(([, value]) => value === null || typeof value !== 'object')
        : [];
    const kept = Object.fromEntries(fields);
    if (jsonLength(params) + jsonLength(kept) > JOURNAL_ENTRY_CHARS) return;
    this.entries.unshift({ keyId, operationId, params, data: kept });
    if (this.entries.length > JOURNAL_ENTRIES) this.entries.length = JOURNAL_ENTRIES;
  }

  /** What was written with this key, for a preview's facts. */
  writtenWith(keyId: string): WrittenBefore {
    return (operationId) =>
      this.entries.filter((entry) => entry.keyId === keyId && entry.operationId === operationId).map(({ params, data }) => ({ params, data }));
  }
}

function attemptKey(keyId: string, operationId: string, params: Params): string {
  return createHash('sha256')
    .update(`${keyId}\n${operationId}\n${canonicalJson(params)}`)
    .digest('base64url');
}
