// The state the guardrails keep between calls, processes and restarts: send counters, idempotency
// records and the audit record. One small interface; the file store (file-guard-store.ts) serves
// the stdio servers of one machine, the memory store serves tests and a single process. A Redis
// store for remote mode's replicas implements the same interface.
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { InputError } from '../model/errors.js';
import { chainAuditLine, type AuditEntry, type AuditHead, type PendingAudit } from './audit.js';
import type { Attempt, AttemptOutcome } from './journal.js';

/**
 * The store's state cannot be trusted (a directory others may write, a planted link, a damaged
 * file): every write that needs it is refused, never let through. The message says where and what
 * to do; it is shown to the model (outcomes.ts) and in the log.
 */
export class GuardStateError extends Error {
  override readonly name = 'GuardStateError';
}

/**
 * The store refuses every claim for now (remote mode: Redis lost what it held, and the replicas are
 * putting back their marks): no write goes past it, marked or not, since the same write may still
 * be on its way from the replica whose mark was lost. Its message is the whole answer.
 */
export class ClaimsPaused extends InputError {}

/**
 * A write's settle, with its audit line, that the store could not make now and keeps to make once
 * it answers (remote mode: Redis did not answer): the call appends no line of its own, or there
 * would be two.
 */
export class SettleOwed extends Error {
  override readonly name = 'SettleOwed';
}

/** Kept with a write's mark in flight (audit.ts): a server that stops with the write at the API leaves it for the store's next look. */
export type { PendingAudit } from './audit.js';

/** The first answer given for an idempotency key; undefined while that write is still on its way. */
export interface IdempotencyRecord {
  operationId: string;
  /** The digest of the operation and its params: the same key with other params is refused. */
  digest: string;
  at: number;
  reply?: CallToolResult;
  /** Unsettled, and the process that reserved it is known to be gone (the file store): its answer will never come. */
  stopped?: boolean;
}

export interface GuardStore {
  /** Adds `amount` unless the counter would pass `cap`, in one atomic step for every process that shares the store. */
  take(counter: string, amount: number, cap: number, expiresAt: number): Promise<{ taken: boolean; count: number }>;
  /** Gives back what `take` added, for a send that was never carried out. */
  giveBack(counter: string, amount: number): Promise<void>;
  count(counter: string): Promise<number>;
  /** The record of an idempotency key, if it was used within its lifetime. */
  lookup(key: string): Promise<IdempotencyRecord | undefined>;
  /** Reserves the key for this write (undefined), or answers the record that already holds it. */
  reserve(key: string, record: IdempotencyRecord, expiresAt: number): Promise<IdempotencyRecord | undefined>;
  /** The write's first answer for its key; undefined forgets the key (nothing was done, so a repeat may run). */
  settle(key: string, reply: CallToolResult | undefined): Promise<void>;
  /** Appends one line to the audit record, chained to the one before. */
  appendAudit(entry: AuditEntry): Promise<void>;
  /** The secret that chains the audit record and keys param digests. */
  auditSecret(): Promise<Buffer>;
  /** Throws a GuardStateError when the state cannot be trusted, so a write is refused before anything is sent. */
  ready?(): Promise<void>;
  /**
   * A store every replica shares (remote mode on Redis), or every stdio process of one machine
   * (the file store, kept over a restart), also keeps each exact write's last attempt that went
   * out (`write`: journal.ts `writeDigest`), so a confirmed write's claim holds across them
   * (shared-mark.ts). In one atomic step: the attempt that refuses this one (the same
   * write in flight, or sent since `approvedAt`), or undefined once this one is marked in flight,
   * owned by `id`, at `now` (the time this server dates its attempts by). "Sent since" is judged by
   * when an attempt could first be seen by other servers, taken in the step that made it visible (the
   * file store's turn, Redis's clock in its script), never by a time taken before the claim waited for
   * that step: a yes given in between, to a preview that could not see the mark, would otherwise send
   * the write again. Whether another's mark
   * outlived its lease is judged at `clockNow` (the system clock as it reads now; `now` if not
   * given): a time that stands after the clock was set back would make a mark renewed a moment ago
   * look lapsed, and its write, still at the API, be sent again. A store the replicas share may
   * judge leases by its own clock and ignore `clockNow` (Redis TIME). A write that needs no yes
   * (`approvedAt` NO_YES) whose last attempt was carried out for a host that never read its answer
   * (settled `unread`) is not marked: that attempt is the answer, `unread` set, and its note is
   * taken in the same step, so of two servers' repeats one is told and the other sends. `audit`
   * is kept with the mark until it is settled (its own line then follows); a mark in flight this
   * step finds orphaned (its server stopped) has the line it kept appended as `unknown`, once.
   */
  claimWrite?(write: string, id: string, approvedAt: number, now: number, clockNow?: number, audit?: PendingAudit): Promise<Attempt | undefined>;
  /**
   * The attempt the owner's claim of a write needing no yes replaced (the write's last one before it, carried out or of
   * unknown outcome), as the claim's own step saw it, asked once right after the claim; undefined: it replaced none. A
   * read made before the claim can miss another server's that began and ended meanwhile, or take for sent one that gave
   * its place back (refused, nothing sent).
   */
  claimedOver?(write: string, id: string): Promise<Attempt | undefined>;
  /** The owner's mark is still at the API (its lease goes on): false when the mark is no longer the owner's in flight (another server took it over). */
  renewWrite?(write: string, id: string, now: number): Promise<boolean>;
  /**
   * How the owner's marked write ended; a refused one gives the place back to the attempt before it.
   * Another's mark is left alone. `unread`: carried out for a call whose host had gone by its
   * answer, noted for the next identical claim (claimWrite). `line`: the write's audit line (done or
   * unknown), appended in the same step as the settle where the store can (the file store): true
   * then, and the call appends none after; a server killed between the two left no line.
   */
  settleWrite?(write: string, id: string, outcome: Exclude<AttemptOutcome, 'in-flight'>, unread?: boolean, line?: AuditEntry): Promise<boolean | undefined>;
  /**
   * The write's unread note taken for the server that kept its answer (undelivered.ts), in one
   * atomic step: false when there is none (another server's repeat took it, or the write went out again).
   */
  takeUnread?(write: string): Promise<boolean>;
  /**
   * The write's last attempt that went out, on any replica (for a preview's warning), read as one
   * step between claims: a mark is either seen here or made visible after this read, so a yes dated
   * before the read (confirm.ts) never stands after a mark it did not see.
   */
  lastSentWrite?(write: string, now: number): Promise<Attempt | undefined>;
  /**
   * How a spent confirmation's use ended (its write carried out, unknown, refused, or never sent:
   * refused), kept where every replica reads it, so a replica that did not spend it can answer a
   * replay truly. Only a use's end is kept, never "in flight": no record reads as unknown.
   */
  noteConfirmation?(confirmation: string, attempt: Attempt): Promise<void>;
  /** How a spent confirmation's use ended, as any replica noted it (journal.ts `outcomeOf` is this replica's own). */
  confirmationOutcome?(confirmation: string): Promise<Attempt | undefined>;
}

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** Counters and records in this process only: for tests, and for a process whose state need not outlive it. */
export class MemoryGuardStore implements GuardStore {
  readonly counters = new Map<string, Expiring<number>>();
  readonly records = new Map<string, Expiring<IdempotencyRecord>>();
  readonly auditLines: string[] = [];
  private head: AuditHead = { seq: 0, mac: '' };
  private readonly secret = randomBytes(32);

  constructor(private readonly now: () => number = Date.now) {}

  async take(counter: string, amount: number, cap: number, expiresAt: number) {
    const count = this.live(this.counters, counter) ?? 0;
    if (count + amount > cap) return { taken: false, count };
    this.counters.set(counter, { value: count + amount, expiresAt });
    return { taken: true, count: count + amount };
  }

  async giveBack(counter: string, amount: number) {
    const entry = this.counters.get(counter);
    if (entry) entry.value = Math.max(0, entry.value - amount);
  }

  async count(counter: string) {
    return this.live(this.counters, counter) ?? 0;
  }

  async lookup(key: string) {
    return this.live(this.records, key);
  }

  async reserve(key: string, record: IdempotencyRecord, expiresAt: number) {
    const held = this.live(this.records, key);
    if (held) return held;
    this.records.set(key, { value: record, expiresAt });
    return undefined;
  }

  async settle(key: string, reply: CallToolResult | undefined) {
    const entry = this.records.get(key);
    if (!entry) return;
    if (reply === undefined) this.records.delete(key);
    else entry.value = { ...entry.value, reply };
  }

  async appendAudit(entry: AuditEntry) {
    const { line, head } = chainAuditLine(this.secret, this.head, entry);
    this.auditLines.push(line);
    this.head = head;
  }

  async auditSecret() {
    return this.secret;
  }

  private live<T>(map: Map<string, Expiring<T>>, key: string): T | undefined {
    const entry = map.get(key);
    if (entry && entry.expiresAt <= this.now()) map.delete(key);
    return entry && entry.expiresAt > this.now() ? entry.value : undefined;
  }
}
