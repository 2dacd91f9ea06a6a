// The write journal: what this server sent lately, per key. The claim stage reads and marks it in
// one synchronous step (never twice), previews read it (an identical write sent before is named),
// and catalogs read what was written here for facts the API cannot show.
import { createHash } from 'node:crypto';
import type { Outcome, Params, WrittenBefore } from '../model/types.js';
import { jsonLength } from '../safe/render.js';
import { canonicalJson } from './confirmations.js';
import { forwardNow } from './forward-now.js';

// Re-exported: the journal's callers date yeses and attempts by it.
export { forwardNow };

/** What was written, kept per key: its 200 newest, each at most 64 KiB of JSON. */
const JOURNAL_ENTRIES = 200;
const JOURNAL_ENTRY_CHARS = 64 * 1024;
/**
 * All keys together, in JSON characters: past it, the key holding the most gives up its own oldest,
 * so one tenant's writes never push out another's (one key's 200 largest fit: a stdio server's
 * journal is as before).
 */
const JOURNAL_CHARS = 16 * 1024 * 1024;
/**
 * How long a write's attempt is remembered once it ended: enough to catch a host's retry after a
 * timeout. One still in flight is remembered until it ends, however long that takes by the system
 * clock (a clock set forward, a 429's Retry-After waited out): until then it is the only thing that
 * keeps a write needing no yes from going out twice.
 */
const ATTEMPT_MEMORY_MS = 30 * 60 * 1000;
/**
 * How many attempts that went out are kept for one key, and for all keys together; and how many
 * confirmations' own outcomes, sent and refused apart. About 200 bytes each: at most ~40 MiB of
 * sent and ~4 MiB of refused attempts, whatever the traffic. A key over its own bound forgets its own oldest; past the total,
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
  /** Who sent it, as an answer names it, when it was read from a store other servers share (shared-mark.ts `fromSharedStore`); else this server. */
  by?: string;
  /** Carried out (needing no yes) for a call whose host had gone by its answer: nobody read it (a shared store's note, taken by the claim that reads it). */
  unread?: boolean;
}
/** One write this server carried out: its params and the answer's plain top-level fields, and their size. */
interface JournalEntry {
  operationId: string;
  params: Params;
  data: unknown;
  chars: number;
}

/** A write that went out, and the one before it: an attempt that ends refused gives its place back to that one. */
interface SentAttempt extends Attempt {
  before?: Attempt;
  /** The confirmation (token or requestState, confirmations.ts `idOf`) whose yes sent it. */
  confirmation?: string;
}

/**
 * What this server carried out lately (a bounded list, newest first), for facts the API cannot
 * show, and how each exact write went. Everything is kept per key fingerprint: a server that
 * serves many tenants never shows one tenant's writes to another.
 */
export class WriteJournal {
  /** What was written, newest first, by key. */
  private readonly entries = new Map<string, { list: JournalEntry[]; chars: number }>();
  private entriesChars = 0;
  /**
   * The last attempt of each exact write (key, operation and normalised params, hashed) that went
   * out (in flight, done, unknown), oldest first, by key, so that one tenant's writes never push
   * out another's. An attempt the API refused never replaces one that went out: it did nothing.
   */
  private readonly sent = new Map<string, Map<string, SentAttempt>>();
  private sentCount = 0;
  /** How each confirmation's own attempt went (by its id), so a spent one is answered truly; refused ones bounded apart. */
  private readonly confirmed = new Map<string, Attempt>();
  private readonly confirmedRefused = new Map<string, Attempt>();

  constructor(private readonly now: () => number = forwardNow) {}

  /** Notes a write's attempt; `in-flight` when it is sent (with the confirmation whose yes sent it), then how it ended. Returns the attempt's time. */
  attempt(keyId: string, operationId: string, params: Params, outcome: AttemptOutcome, confirmation?: string): number {
    const key = writeDigest(keyId, operationId, params);
    const own = this.sent.get(keyId);
    const current = own?.get(key);
    if (outcome === 'in-flight') {
      const at = this.now();
      const before = current && current.outcome !== 'in-flight' ? { at: current.at, outcome: current.outcome } : current?.before;
      this.keepSent(keyId, key, { at, outcome, ...(before ? { before } : {}), ...(confirmation ? { confirmation } : {}) });
      if (confirmation) this.noteConfirmation(confirmation, { at, outcome });
      return at;
    }
    const at = current?.at ?? this.now();
    if (current?.confirmation) this.noteConfirmation(current.confirmation, { at, outcome });
    if (outcome !== 'refused') {
      this.keepSent(keyId, key, { at, outcome });
      return at;
    }
    // Refused: nothing was done, so the write's last attempt that went out is the one before this.
    if (current?.outcome !== 'in-flight') return at;
    if (current.before) this.keepSent(keyId, key, current.before);
    else if (own?.delete(key)) {
      this.sentCount--;
      if (own.size === 0) this.sent.delete(keyId);
    }
    return at;
  }

  /** The last attempt of exactly this write that went out: in flight, or done or unknown within the last half hour; if any. */
  lastSent(keyId: string, operationId: string, params: Params): Attempt | undefined {
    const found = this.sent.get(keyId)?.get(writeDigest(keyId, operationId, params));
    return found && this.remembered(found) ? { at: found.at, outcome: found.outcome } : undefined;
  }

  /** How the attempt a confirmation's yes sent went, if it is still in flight or this server sent it within the last half hour. */
  outcomeOf(confirmation: string): Attempt | undefined {
    const found = this.confirmed.get(confirmation) ?? this.confirmedRefused.get(confirmation);
    return found && this.remembered(found) ? found : undefined;
  }

  /** An attempt in flight until it ends; one that ended for half an hour. */
  private remembered({ at, outcome }: Attempt): boolean {
    return outcome === 'in-flight' || at > this.now() - ATTEMPT_MEMORY_MS;
  }

  /** A confirmation this call spent without sending its write (other params, facts read otherwise, a no): shown again, nothing was done with it. */
  spentUnsent(confirmation: string): void {
    this.noteConfirmation(confirmation, { at: this.now(), outcome: 'refused' });
  }

  private keepSent(keyId: string, key: string, attempt: SentAttempt): void {
    const into = this.sent.get(keyId) ?? new Map<string, SentAttempt>();
    this.sent.set(keyId, into);
    if (into.delete(key)) this.sentCount--; // re-inserted: each map stays in order of last use
    into.set(key, attempt);
    this.sentCount++;
    this.sentCount -= this.forgetOldest(into, SENT_KEPT_PER_KEY);
    while (this.sentCount > SENT_KEPT) {
      const dropped = this.forgetForRoom();
      this.sentCount -= dropped;
      if (dropped === 0) break; // every attempt kept is in flight: those are as many as the writes at the API at once
    }
  }

  /**
   * Past the total bound: the busiest key's oldest ended attempt goes; if all it holds is in flight,
   * another key's (the first found with one), else the bound would stop holding while it is. A key
   * left with none is dropped.
   */
  private forgetForRoom(): number {
    const busiest = this.busiestKey();
    const first = this.forgetOldest(busiest[1], busiest[1].size - 1);
    if (first > 0) return this.droppedFrom(busiest[0], first);
    for (const [keyId, attempts] of this.sent) {
      const dropped = attempts === busiest[1] ? 0 : this.forgetOldest(attempts, attempts.size - 1);
      if (dropped > 0) return this.droppedFrom(keyId, dropped);
    }
    return 0;
  }

  /** `dropped` attempts went from `keyId`'s: its map goes too once it is empty. */
  private droppedFrom(keyId: string, dropped: number): number {
    if (this.sent.get(keyId)?.size === 0) this.sent.delete(keyId);
    return dropped;
  }

  private noteConfirmation(confirmation: string, attempt: Attempt): void {
    const [into, other, kept] =
      attempt.outcome === 'refused' ? [this.confirmedRefused, this.confirmed, REFUSED_KEPT] : [this.confirmed, this.confirmedRefused, SENT_KEPT];
    other.delete(confirmation);
    into.delete(confirmation);
    into.set(confirmation, attempt);
    this.forgetOldest(into, kept);
  }

  /**
   * Drops expired attempts and the oldest past `kept`, never one in flight (for a write needing no
   * yes it is all that refuses the same write while it is at the API); returns how many went.
   */
  private forgetOldest(attempts: Map<string, Attempt>, kept: number): number {
    let dropped = 0;
    for (const [old, attempt] of attempts) {
      if (attempts.size <= kept && this.remembered(attempt)) break;
      if (attempt.outcome === 'in-flight') continue;
      attempts.delete(old);
      dropped++;
    }
    return dropped;
  }

  /** The key with the most attempts kept, and its attempts (only looked for when the total bound is reached). */
  private busiestKey(): [string, Map<string, SentAttempt>] {
    let busiest: [string, Map<string, SentAttempt>] | undefined;
    for (const entry of this.sent) if (!busiest || entry[1].size > busiest[1].size) busiest = entry;
    return busiest as [string, Map<string, SentAttempt>];
  }

  /** Keeps the params and the answer's top-level plain fields (its id): the answer may be anything. */
  record(keyId: string, operationId: string, params: Params, data: unknown): void {
    const fields =
      typeof data === 'object' && data !== null && !Array.isArray(data)
        ? Object.entries(data).filter(([, value]) => value === null || typeof value !== 'object')
        : [];
    const kept = Object.fromEntries(fields);
    const chars = jsonLength(params) + jsonLength(kept);
    if (chars > JOURNAL_ENTRY_CHARS) return;
    const own = this.entries.get(keyId) ?? { list: [], chars: 0 };
    this.entries.set(keyId, own);
    own.list.unshift({ operationId, params, data: kept, chars });
    own.chars += chars;
    this.entriesChars += chars;
    while (own.list.length > JOURNAL_ENTRIES) this.dropOldestEntry(keyId, own);
    while (this.entriesChars > JOURNAL_CHARS) this.dropOldestEntry(...this.keyWritingMost());
  }

  /** What was written with this key, for a preview's facts. */
  writtenWith(keyId: string): WrittenBefore {
    return (operationId) =>
      (this.entries.get(keyId)?.list ?? []).filter((entry) => entry.operationId === operationId).map(({ params, data }) => ({ params, data }));
  }

  private dropOldestEntry(keyId: string, own: { list: JournalEntry[]; chars: number }): void {
    const oldest = own.list.pop();
    if (!oldest) return;
    own.chars -= oldest.chars;
    this.entriesChars -= oldest.chars;
    if (own.list.length === 0) this.entries.delete(keyId);
  }

  /** The key whose kept writes are the largest (only looked for past the total). */
  private keyWritingMost(): [string, { list: JournalEntry[]; chars: number }] {
    let most: [string, { list: JournalEntry[]; chars: number }] | undefined;
    for (const entry of this.entries) if (!most || entry[1].chars > most[1].chars) most = entry;
    return most as [string, { list: JournalEntry[]; chars: number }];
  }
}

/** One exact write (key, operation and normalised params), hashed: what the journal, and a shared store, know it by. */
export function writeDigest(keyId: string, operationId: string, params: Params): string {
  return createHash('sha256')
    .update(`${keyId}\n${operationId}\n${canonicalJson(params)}`)
    .digest('base64url');
}
