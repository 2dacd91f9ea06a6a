// The write journal: what this server sent lately, per key. The claim stage reads and marks it in
// one synchronous step (never twice), previews read it (an identical write sent before is named),
// and catalogs read what was written here for facts the API cannot show.
import { createHash } from 'node:crypto';
import type { Outcome, Params, WrittenBefore } from '../model/types.js';
import { jsonLength } from '../safe/render.js';
import { canonicalJson } from './confirmations.js';

const JOURNAL_ENTRIES = 200;
const JOURNAL_ENTRY_CHARS = 64 * 1024;
/** How long a write's attempt is remembered: enough to catch a host's retry after a timeout. */
const ATTEMPT_MEMORY_MS = 30 * 60 * 1000;
/**
 * How many attempts that went out are kept for one key, and for all keys together; and how many
 * refused ones (all keys). About 200 bytes each: at most ~20 MiB of sent and ~4 MiB of refused
 * attempts, whatever the traffic. A key over its own bound forgets its own oldest; past the total,
 * the key with the most attempts gives up its oldest, so a busy tenant only ever forgets its own.
 */
const SENT_KEPT_PER_KEY = 5_000;
const SENT_KEPT = 100_000;
const REFUSED_KEPT = 20_000;

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
   * first, by key: writes that went out (in flight, done, unknown), kept per key so that one
   * tenant's writes never push out another's; and apart from them those the API refused, so that
   * a flood of refused attempts (made-up keys, in remote mode) never pushes out a sent write.
   */
  private readonly sent = new Map<string, Map<string, Attempt>>();
  private sentCount = 0;
  private readonly refused = new Map<string, Attempt>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes a write's attempt; `in-flight` when it is sent, then how it ended. */
  attempt(keyId: string, operationId: string, params: Params, outcome: AttemptOutcome): void {
    const key = attemptKey(keyId, operationId, params);
    const own = this.sent.get(keyId);
    const before = own?.get(key) ?? this.refused.get(key);
    if (own?.delete(key)) this.sentCount--; // re-inserted: each map stays in order of last use
    this.refused.delete(key);
    const attempt = { at: outcome === 'in-flight' ? this.now() : (before?.at ?? this.now()), outcome };
    if (outcome === 'refused') {
      this.refused.set(key, attempt);
      if (own?.size === 0) this.sent.delete(keyId);
      this.forgetOldest(this.refused, REFUSED_KEPT);
      return;
    }
    const into = own ?? new Map<string, Attempt>();
    this.sent.set(keyId, into);
    into.set(key, attempt);
    this.sentCount++;
    this.sentCount -= this.forgetOldest(into, SENT_KEPT_PER_KEY);
    while (this.sentCount > SENT_KEPT) {
      const busiest = this.busiestKey();
      busiest.delete(busiest.keys().next().value as string);
      this.sentCount--;
    }
  }

  /** The last attempt of exactly this write within the last half hour, if any. */
  lastAttempt(keyId: string, operationId: string, params: Params): Attempt | undefined {
    const key = attemptKey(keyId, operationId, params);
    const found = this.sent.get(keyId)?.get(key) ?? this.refused.get(key);
    return found && found.at > this.now() - ATTEMPT_MEMORY_MS ? found : undefined;
  }

  /** Drops expired attempts and the oldest past `kept`; returns how many went. */
  private forgetOldest(attempts: Map<string, Attempt>, kept: number): number {
    let dropped = 0;
    for (const [old, { at }] of attempts) {
      if (attempts.size <= kept && at > this.now() - ATTEMPT_MEMORY_MS) break;
      attempts.delete(old);
      dropped++;
    }
    return dropped;
  }

  /** The key with the most attempts kept (only looked for when the total bound is reached). */
  private busiestKey(): Map<string, Attempt> {
    let busiest: Map<string, Attempt> | undefined;
    for (const attempts of this.sent.values()) if (!busiest || attempts.size > busiest.size) busiest = attempts;
    return busiest as Map<string, Attempt>;
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
