// The guardrails' state for the stdio servers of one machine, in the user's state directory, read
// and rewritten under a lock file (created exclusively) and replaced by an atomic rename, so the
// seven server processes (and a restarted one) see one set of counters, one set of idempotency
// records and one audit chain. state.json holds the counters and the audit chain's head; each
// idempotency record and each write's last attempt is a small file of its own
// (records/, writes/), so a write reads and rewrites only its own entry, however many writes the
// last day held (one file for all made every write cost more than the one before). Every file is
// the owner's only (0600, folders 0700); a directory or file others could have changed, or a state
// file that is not what the store wrote, refuses the writes it is for (own-files.ts,
// guard-state.ts) instead of being trusted. The lock is state-lock.ts; files written whole, and a
// disk's refusal said as such, state-files.ts; who a writer is and whether it lives, process-place.ts.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { chainAuditLine, headOfLine, orphanedLine, type AuditEntry, type AuditHead } from './audit.js';
import { GuardStateError, type GuardStore, type IdempotencyRecord, type PendingAudit } from './guard-store.js';
import { damagedEntry, emptyState, isRecord, isSentWrite, parseGuardState, type Expiring, type GuardState, type SentWrite } from './guard-state.js';
import type { Attempt } from './journal.js';
import { NO_YES, WRITE_MARK_LEASE_MS } from './shared-mark.js';
import { makeDirectories } from './make-directories.js';
import { moveAsideCommand, openAuditFile, ownDirectory, readOwnFile } from './own-files.js';
import { processIsDead, systemSteadyClock, thisProcess, type SteadyClock } from './process-place.js';
import { createWhole, removeEntry, usable, writeAtomically } from './state-files.js';
import { LOCK_STALE_MS, lock, readLock } from './state-lock.js';

export type { GuardState } from './guard-state.js';

/**
 * Which turns sync the folder after their rename. An idempotency record, reserved or answered, is
 * durable: a power loss must not forget it (review 26c), and the repeat with its key answers its
 * reply. So is a write marked in flight before it is sent. A write's mark renewed or settled after
 * the send is not: if a power loss loses that, what is left is the mark of a process that is gone,
 * read as an unknown outcome, never as a write not sent (one fsync fewer per write).
 */
const DURABLE = { durable: true };
const AFTER_SEND = { durable: false };

/** How long a write's last attempt is kept once it ended: as long as a process's own journal keeps it (journal.ts). */
const WRITE_MEMORY_MS = 30 * 60 * 1000;
/** What claims replaced, kept for claimedOver (asked at once after each): more are never waiting unless one was not asked. */
const REPLACED_KEPT = 512;
/**
 * The most orphaned writes one sweep appends lines for (each a line, and its mark's file rewritten,
 * under the lock every server waits on); the rest wait for the next sweep or their write's next claim.
 */
const ORPHANS_PER_SWEEP = 256;

export const STATE_FILE = 'state.json';
export const SECRET_FILE = 'audit.key';
/** Expired entries (and temporary files a crash left) are removed this often, by whichever process's turn comes first. */
const SWEEP_EVERY_MS = 10 * 60 * 1000;

/** The entries kept one file each: what each holds and how a file of it is checked. */
const ENTRY_KINDS = {
  records: isRecord,
  writes: isSentWrite,
} as const;
type EntryKind = keyof typeof ENTRY_KINDS;
type EntryValue<K extends EntryKind> = K extends 'records' ? IdempotencyRecord : SentWrite;
/** What an entry turn leaves: the entry to keep, undefined to remove it, or 'unchanged' (nothing is written). */
type EntryChange<T, R> = { result: R; entry: Kept<T> | undefined | 'unchanged' };
/** A write's mark as its file keeps it: in flight, it carries its audit line but for the outcome (guard-store.ts PendingAudit). */
type MarkedWrite = SentWrite & { audit?: PendingAudit };
/**
 * `seen`: when the mark could first be seen by other servers (taken in the turn that wrote it), which
 * may be later than `at`, the journal's time of the same attempt (taken before the claim waited for the
 * lock). A yes is compared with `seen`; everything else (answers, the journal) with `at`.
 */
type Seen = { seen?: number };

/**
 * An entry as its file keeps it: besides its expiry by the system clock (`expiresAt`), the same
 * expiry by a steady clock (`steady`), which no setting of the system clock moves. An entry is live
 * while either says so: a system clock set forward (NTP correcting a clock days behind) never
 * expires an idempotency record early, and one set back keeps it longer, never less. Files written
 * before it have no `steady`, and expire by the system clock as they did.
 */
type Kept<T> = Expiring<T> & { steady?: SteadyExpiry };
interface SteadyExpiry {
  /** Which steady clock: its readings compare only with its own (one boot of the machine, or one process). */
  clock: string;
  expiresAt: number;
  /** A write in flight: when its owner last renewed it, by this clock. */
  alive?: number;
}

export class FileGuardStore implements GuardStore {
  private secret: Buffer | undefined;
  /** What the claims of writes needing no yes replaced, by owner id, as their turn saw it, until claimedOver gives it. */
  private readonly replaced = new Map<string, Attempt>();

  constructor(
    private readonly dir: string,
    private readonly auditFile: string = join(dir, 'audit.jsonl'),
    private readonly now: () => number = Date.now,
    // A store given a clock of its own (a test's) has no steady clock unless it is given one too: its time is that clock's alone.
    private readonly steady: SteadyClock | undefined = now === Date.now ? systemSteadyClock : undefined,
  ) {}

  take(counter: string, amount: number, cap: number, expiresAt: number) {
    return this.turn((state) => {
      const count = live(state.counters[counter], this.now()) ?? 0;
      if (count + amount > cap) return { taken: false, count };
      state.counters[counter] = { value: count + amount, expiresAt };
      return { taken: true, count: count + amount };
    });
  }

  giveBack(counter: string, amount: number) {
    return this.turn((state) => {
      const entry = state.counters[counter];
      if (entry) entry.value = Math.max(0, entry.value - amount);
    });
  }

  async count(counter: string) {
    ownDirectory(this.dir);
    return live(readState(this.dir).counters[counter], this.now()) ?? 0;
  }

  async lookup(key: string) {
    await this.migrated();
    const entry = this.readEntry('records', key);
    return entry && this.unexpired(entry) ? unsettled(entry.value) : undefined;
  }

  /** The key reserved for this process's write (named as a lock names its owner), or the record that holds it. */
  reserve(key: string, record: IdempotencyRecord, expiresAt: number) {
    return this.entryTurn('records', key, DURABLE, (held) =>
      held ? { result: unsettled(held.value), entry: 'unchanged' } : { result: undefined, entry: { value: { ...record, sender: thisProcess() }, expiresAt } },
    );
  }

  settle(key: string, reply: CallToolResult | undefined) {
    return this.entryTurn('records', key, DURABLE, (held) => {
      if (!held) return { result: undefined, entry: 'unchanged' };
      return { result: undefined, entry: reply === undefined ? undefined : { ...held, value: { ...held.value, reply } } };
    });
  }

  /**
   * Writes' last attempts, shared by the stdio processes of this machine (and kept over a restart),
   * as Redis keeps them for remote replicas: the claim refuses a write in flight, or sent since the
   * yes (`approvedAt`; a write needing no yes has none), and marks it in flight in one turn under the lock.
   * The mark is dated inside that turn (never before `now`, the journal's time): a mark dated before it
   * waited for the lock would stand before a yes given while nobody could see it (lastSentWrite reads in
   * a turn too), and that yes would send the write again.
   * The mark carries `audit` in the same file (no write more); an orphan this turn finds gets its line first (entryTurn).
   */
  async claimWrite(write: string, id: string, approvedAt: number, now: number, clockNow = now, audit?: PendingAudit) {
    // Read once per process (ready() has): an orphaned mark's line is chained inside the turn, which awaits nothing.
    await this.auditSecret();
    return this.entryTurn('writes', write, { ...DURABLE, auditOrphan: true }, (entry): EntryChange<SentWrite, Attempt | undefined> => {
      const held = sentWrite(entry && this.unexpired(entry, clockNow) ? entry : undefined, clockNow, this.steadyReading());
      if (held && (held.outcome === 'in-flight' || seenAt(held) >= approvedAt)) return { result: { at: held.at, outcome: held.outcome }, entry: 'unchanged' };
      // Its answer never read: this claim is told so, instead of sending it again, and takes the note.
      if (entry && held?.unread && held.outcome === 'done' && approvedAt === NO_YES) {
        const { unread: _taken, ...told } = entry.value;
        return { result: { at: held.at, outcome: 'done', unread: true }, entry: { ...entry, value: told } };
      }
      const before =
        held && held.outcome !== 'in-flight'
          ? { at: held.at, outcome: held.outcome, ...(held.unread ? { unread: true as const } : {}), ...seenOf(held) }
          : undefined;
      const value: MarkedWrite & Seen = {
        at: now,
        seen: Math.max(now, this.now()),
        outcome: 'in-flight',
        owner: id,
        alive: now,
        sender: thisProcess(),
        ...(before ? { before } : {}),
        ...(audit ? { audit } : {}),
      };
      if (before && approvedAt === NO_YES) this.keepReplaced(id, { at: before.at, outcome: before.outcome });
      return { result: undefined, entry: this.renewed(value, now + WRITE_MEMORY_MS) };
    });
  }

  renewWrite(write: string, id: string, now: number) {
    return this.entryTurn('writes', write, AFTER_SEND, (entry): EntryChange<SentWrite, boolean> => {
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return { result: false, entry: 'unchanged' };
      return { result: true, entry: this.renewed({ ...entry.value, alive: now }, now + WRITE_MEMORY_MS) };
    });
  }

  /**
   * The owner's mark settled; `line` (its audit line) appended in the same turn, before the mark
   * drops the line it kept: true when it was. A crash between the two leaves the kept line, found
   * as an orphan's later (a second line), never none.
   */
  async settleWrite(write: string, id: string, outcome: 'done' | 'unknown' | 'refused', unread = false, line?: AuditEntry) {
    const secret = line ? await this.auditSecret() : undefined;
    return this.entryTurn('writes', write, AFTER_SEND, (entry, state): EntryChange<SentWrite, boolean> => {
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return { result: false, entry: 'unchanged' };
      const { before } = entry.value;
      if (outcome === 'refused') return { result: false, entry: before ? { ...entry, value: before } : undefined };
      if (line && secret) {
        state.audit[this.auditFile] = appendChained(this.auditFile, secret, state.audit[this.auditFile], line);
        writeState(this.dir, state);
      }
      const note = unread && outcome === 'done' ? { unread: true as const } : {};
      const value = { at: entry.value.at, outcome, ...note, ...seenOf(entry.value) };
      return { result: line !== undefined, entry: { value, expiresAt: this.now() + WRITE_MEMORY_MS } };
    });
  }

  takeUnread(write: string) {
    return this.entryTurn('writes', write, AFTER_SEND, (entry): EntryChange<SentWrite, boolean> => {
      if (!entry?.value.unread || !this.unexpired(entry, this.now())) return { result: false, entry: 'unchanged' };
      const { unread: _given, ...rest } = entry.value;
      return { result: true, entry: { ...entry, value: rest } };
    });
  }

  /** The attempt the owner's claim replaced, as its turn saw it (no file read again): given once. */
  async claimedOver(_write: string, id: string) {
    const replaced = this.replaced.get(id);
    this.replaced.delete(id);
    return replaced;
  }

  /** Kept for claimedOver, asked right after the claim; a few hundred at most, should a claim never be asked about. */
  private keepReplaced(id: string, attempt: Attempt): void {
    if (this.replaced.size >= REPLACED_KEPT) this.replaced.delete(this.replaced.keys().next().value as string);
    this.replaced.set(id, attempt);
  }

  /**
   * Read in a turn of its own, between other servers' turns: a claim's mark is either seen here or
   * dated after this read (claimWrite), so a yes dated before the read never stands after a mark it
   * missed. Read without the lock, a mark dated inside a turn not yet written out was missed.
   */
  lastSentWrite(write: string, now: number) {
    return this.locked(() => {
      const entry = this.readEntry('writes', write);
      const held = sentWrite(entry && this.unexpired(entry, now) ? entry : undefined, now, this.steadyReading());
      return held && { at: held.at, outcome: held.outcome };
    });
  }

  async appendAudit(entry: AuditEntry) {
    const secret = await this.auditSecret();
    await this.turn((state) => {
      state.audit[this.auditFile] = appendChained(this.auditFile, secret, state.audit[this.auditFile], entry);
    });
  }

  /** Every write asks first: a directory or file others could change, or a damaged state file, refuses it before anything is sent. */
  async ready() {
    usable(this.dir, () => ownDirectory(this.dir));
    readState(this.dir);
    // A lock no turn can take (not a file the servers make) would let the write out and lose its audit line: refused first.
    readLock(join(this.dir, 'state.lock'));
    usable(this.auditFile, () => {
      makeDirectories(dirname(this.auditFile));
      fs.closeSync(openAuditFile(this.auditFile));
    });
    // So would an audit secret that cannot be read or made (read once per process, kept after).
    await this.auditSecret();
  }

  /**
   * Created once, exclusively: the first process to write makes it, every later one reads it. It
   * appears whole and synced (written beside, then linked into place), so no process reads it
   * half-written, and a power loss does not leave it empty. One left empty or cut short all the
   * same (by an earlier version) was never used, since no secret that short is read: it is made
   * again, under the lock, unless the state says lines were chained with a secret now lost.
   */
  async auditSecret() {
    if (this.secret) return this.secret;
    ownDirectory(this.dir);
    const path = join(this.dir, SECRET_FILE);
    createWhole(path, randomBytes(32).toString('base64url'));
    if (!isSecret(readOwnFile(path)))
      await this.locked(() => {
        if (isSecret(readOwnFile(path))) return;
        if (Object.keys(readState(this.dir).audit).length > 0)
          throw new GuardStateError(
            `the audit secret ${path} is empty or cut short, and the audit record was chained with the secret it held, so it is not made again. Restore it from a backup, or move it aside (${moveAsideCommand(path)}): a new one is made, and the record's lines before verify no longer`,
          );
        writeAtomically(path, randomBytes(32).toString('base64url'), { durable: true });
      });
    this.secret = readSecret(this.dir);
    return this.secret;
  }

  /** One turn with state.json: under the lock, read, change, written back by rename. Nothing is awaited inside. */
  private turn<T>(change: (state: GuardState) => T): Promise<T> {
    return this.locked((state) => {
      const result = change(state);
      writeState(this.dir, prune(state, this.now()));
      return result;
    });
  }

  /** One turn with one entry's own file (its expired entry reads as none). */
  private entryTurn<K extends EntryKind, R>(
    kind: K,
    name: string,
    { durable, auditOrphan = false }: { durable: boolean; auditOrphan?: boolean },
    change: (entry: Kept<EntryValue<K>> | undefined, state: GuardState) => EntryChange<EntryValue<K>, R>,
  ): Promise<R> {
    return this.locked((state) => {
      const path = this.entryPath(kind, name);
      const read = this.readEntry(kind, name, path);
      // A claim that finds the write's mark orphaned (its server stopped with it at the API) appends its line first.
      const orphan = auditOrphan ? this.auditOrphans(state, [read as Kept<SentWrite> | undefined])[0] : undefined;
      const current = (orphan ?? read) as Kept<EntryValue<K>> | undefined;
      const { result, entry } = change(current && this.unexpired(current) ? current : undefined, state);
      if (entry === undefined || (entry === 'unchanged' && orphan && !this.unexpired(orphan))) {
        if (current) removeEntry(path);
      } else if (entry !== 'unchanged' || orphan) {
        const kept = entry === 'unchanged' ? (current as Kept<EntryValue<K>>) : entry;
        writeAtomically(path, JSON.stringify({ name, ...this.withSteady(kept) }), { durable });
      }
      return result;
    });
  }

  /**
   * Under the lock: entries an earlier version kept in state.json move to their own files first, on
   * every turn (a process of that version, not yet restarted, may have added one since the last),
   * and expired ones are swept now and then.
   */
  private async locked<T>(work: (state: GuardState) => T): Promise<T> {
    ownDirectory(this.dir);
    const release = await lock(join(this.dir, 'state.lock'));
    try {
      this.turnReading = undefined;
      this.inTurn = true;
      const state = readState(this.dir);
      if (this.moveLegacyEntries(state)) writeState(this.dir, state);
      this.sweepIfDue(state);
      return work(state);
    } finally {
      this.inTurn = false;
      release();
    }
  }

  private inTurn = false;
  private turnReading: { clock: string; ms: number } | undefined;

  /**
   * The steady clock now; inside a turn, read once (a turn awaits nothing, so its readings would
   * differ by microseconds, and each is a read of /proc/uptime).
   */
  private steadyReading(): { clock: string; ms: number } | undefined {
    if (!this.steady) return undefined;
    if (!this.inTurn) return this.steady();
    this.turnReading ??= this.steady();
    return this.turnReading;
  }

  /** A read outside a turn: an earlier version's entries in state.json first move to their files, under the lock. */
  private async migrated(): Promise<void> {
    ownDirectory(this.dir);
    if (hasLegacyEntries(readState(this.dir))) await this.locked(() => undefined);
  }

  /**
   * Entries kept in state.json by an earlier version (or a process of one still running) move to
   * their own files; true if any did. Where a file already holds the entry, it stays, but for a
   * write an earlier version's process sent after it (that process cannot see the files). A damaged
   * file is left for its own write to name, and its old entry waits in state.json.
   */
  private moveLegacyEntries(state: GuardState): boolean {
    let moved = false;
    for (const kind of Object.keys(ENTRY_KINDS) as EntryKind[])
      for (const [name, entry] of Object.entries(state[kind]) as Array<[string, Expiring<IdempotencyRecord | SentWrite>]>) {
        let current: Kept<IdempotencyRecord | SentWrite> | undefined;
        try {
          current = this.readEntry(kind, name);
        } catch (error) {
          if (error instanceof GuardStateError) continue;
          throw error;
        }
        const unexpired = (held: Kept<unknown> | undefined) => held !== undefined && this.unexpired(held);
        const later = kind === 'writes' && current !== undefined && entry.value.at > current.value.at;
        if (unexpired(entry) && (!unexpired(current) || later))
          writeAtomically(this.entryPath(kind, name), JSON.stringify({ name, ...this.withSteady(entry) }), { durable: true });
        delete state[kind][name];
        moved = true;
      }
    return moved;
  }

  private lastSweep = 0;

  /**
   * Removes expired entries' files and temporary files a crashed process left; a damaged file is left
   * for the user (reading it names it). It reads every write's file anyway: orphaned marks (their
   * server stopped with the write at the API) get their audit lines here, ORPHANS_PER_SWEEP at most.
   * It runs in a process's first turn, so a server's first write finds those of writes never repeated.
   */
  private sweepIfDue(state: GuardState): void {
    const now = this.now();
    // A clock set back (by more than the interval) sweeps now, rather than not until it is past the last sweep again.
    if (Math.abs(now - this.lastSweep) < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    // state.json's own temporary files, the lock's (and a lock moved aside) and the audit secret's, left by a process killed mid-way.
    for (const file of fs.readdirSync(this.dir))
      if (
        (file.startsWith(`${STATE_FILE}.`) || file.startsWith('state.lock.') || file.startsWith(`${SECRET_FILE}.`)) &&
        (file.endsWith('.tmp') || file.includes('.stale-'))
      )
        sweepOne(join(this.dir, file), now, true);
    const orphans: Array<{ path: string; entry: Kept<SentWrite> & { name: string } }> = [];
    for (const kind of Object.keys(ENTRY_KINDS) as EntryKind[]) {
      const folder = this.entryFolder(kind);
      for (const file of fs.readdirSync(folder)) {
        const path = join(folder, file);
        const text = readQuietly(path);
        const orphan = kind === 'writes' ? this.orphanedMark(text) : undefined;
        // One past the bound is left as it is (not swept for its age either): the next sweep appends its line.
        if (!orphan) sweepOne(path, now, undefined, (entry) => this.unexpired(entry, now), text);
        else if (orphans.length < ORPHANS_PER_SWEEP) orphans.push({ path, entry: orphan });
      }
    }
    const settled = this.auditOrphans(
      state,
      orphans.map(({ entry }) => entry),
    );
    orphans.forEach(({ path, entry }, index) => {
      const done = settled[index];
      if (done && this.unexpired(done, now)) writeAtomically(path, JSON.stringify({ name: entry.name, ...this.withSteady(done) }), AFTER_SEND);
      else if (done) removeEntry(path);
    });
  }

  /** A write's file that holds a mark orphaned with its audit line (its server stopped with it at the API), as parsed. */
  private orphanedMark(text: string | undefined): (Kept<SentWrite> & { name: string }) | undefined {
    const parsed = parseEntry(text);
    if (!parsed || typeof parsed.name !== 'string') return undefined;
    const { name, ...entry } = parsed;
    if (!isSentWrite(entry) || !this.orphanLine(entry as Kept<SentWrite>)) return undefined;
    return { name, ...(entry as Kept<SentWrite>) };
  }

  /**
   * The audit line a write's mark kept, when the mark is orphaned: in flight, its server stopped
   * (dead, or its lease ran out by both clocks: sentWrite), or expired altogether. Undefined otherwise.
   */
  private orphanLine(entry: Kept<SentWrite>): AuditEntry | undefined {
    const { audit } = entry.value as MarkedWrite;
    if (entry.value.outcome !== 'in-flight' || audit === undefined) return undefined;
    const now = this.now();
    if (this.unexpired(entry, now) && sentWrite(entry, now, this.steadyReading())?.outcome !== 'unknown') return undefined;
    return orphanedLine(audit);
  }

  /**
   * Under the lock: each orphaned mark's line appended (one write of state.json for them all), and
   * the mark given back without it (its file is the caller's to write), so no other turn appends it
   * again. Nothing else of the mark changes: how the double-send guard reads it is sentWrite's, and a
   * sender only paused past its lease still owns it (its own line then follows the orphan's). Not orphaned: undefined.
   */
  private auditOrphans(state: GuardState, entries: Array<Kept<SentWrite> | undefined>): Array<Kept<SentWrite> | undefined> {
    const secret = this.secret;
    if (!secret) return entries.map(() => undefined);
    let head = state.audit[this.auditFile];
    const settled = entries.map((entry): Kept<SentWrite> | undefined => {
      const line = entry && this.orphanLine(entry);
      if (!entry || !line) return undefined;
      head = appendChained(this.auditFile, secret, head, line);
      const { audit: _appended, ...mark } = entry.value as MarkedWrite;
      return { ...entry, value: mark };
    });
    if (head && settled.some(Boolean)) {
      state.audit[this.auditFile] = head;
      writeState(this.dir, state);
    }
    return settled;
  }

  /** Whether the entry is live: by the system clock, or by the steady clock it was written by (when this process reads that clock). */
  private unexpired(entry: Kept<unknown>, now = this.now()): boolean {
    if (entry.expiresAt > now) return true;
    const reading = entry.steady && this.steadyReading();
    if (!entry.steady || !reading) return false;
    return entry.steady.clock === reading.clock && entry.steady.expiresAt > reading.ms;
  }

  /** A write in flight, marked or renewed now: when, by the steady clock too (its lease is counted by either clock). */
  private renewed(value: SentWrite, expiresAt: number): Kept<SentWrite> {
    const reading = this.steadyReading();
    if (!reading) return { value, expiresAt };
    return { value, expiresAt, steady: { clock: reading.clock, expiresAt: reading.ms + (expiresAt - this.now()), alive: reading.ms } };
  }

  /**
   * The entry with its expiry by the steady clock: one it carries over (the same expiry) by this
   * clock is kept; else (none, or another boot's) it is read now, from what the system clock leaves.
   */
  private withSteady<T>(entry: Kept<T>): Kept<T> {
    const reading = this.steadyReading();
    if (!reading) return entry;
    if (entry.steady?.clock === reading.clock) return entry;
    return { ...entry, steady: { clock: reading.clock, expiresAt: reading.ms + (entry.expiresAt - this.now()) } };
  }

  /** The folder of one kind of entry, made 0700 if it is missing; refused if others could change it. */
  private entryFolder(kind: EntryKind): string {
    const folder = join(this.dir, kind);
    ownDirectory(folder);
    return folder;
  }

  /** An entry's file is named by a hash of its name: idempotency keys are the model's text, and names have no length limit. */
  private entryPath(kind: EntryKind, name: string): string {
    return join(this.entryFolder(kind), `${createHash('sha256').update(name).digest('hex')}.json`);
  }

  /** The entry as the store wrote it (expired or not), undefined if there is none; anything else is refused, naming its file. */
  private readEntry<K extends EntryKind>(kind: K, name: string, path = this.entryPath(kind, name)): Kept<EntryValue<K>> | undefined {
    const text = readOwnFile(path);
    if (text === undefined) return undefined;
    const entry = parseEntry(text);
    if (!entry) throw damagedEntry(path, 'it is not what the servers write');
    const { name: written, ...rest } = entry;
    if (written !== name || !ENTRY_KINDS[kind](rest)) throw damagedEntry(path, 'it is not what the servers write');
    return rest as Kept<EntryValue<K>>;
  }
}

/**
 * Removes one expired entry, or a temporary file a crash left. Anything else (a damaged file, a
 * folder, a link) is left as it is: the write it is for names it, and one odd file never holds up
 * every other write's turn.
 */
function sweepOne(path: string, now: number, leftByCrash = path.endsWith('.tmp'), unexpired?: (entry: Kept<unknown>) => boolean, text?: string): void {
  try {
    if (leftByCrash) {
      // A file's time is the system clock's, whatever clock the store was given.
      // A lock moved aside keeps its own time: when it was moved (its ctime) says whether its breaker is done with it.
      const stat = fs.lstatSync(path);
      const since = path.includes('.stale-') ? Math.max(stat.mtimeMs, stat.ctimeMs) : stat.mtimeMs;
      if (Date.now() - since > LOCK_STALE_MS) fs.rmSync(path, { force: true });
      return;
    }
    const entry = parseEntry(text ?? readOwnFile(path));
    if (entry && !(unexpired ? unexpired(entry) : entry.expiresAt > now)) fs.rmSync(path, { force: true });
  } catch {
    // Not a file the store wrote: left for the write it is for to name.
  }
}

/** A file's text as readOwnFile gives it; undefined for one it refuses (left for the write it is for to name). */
function readQuietly(path: string): string | undefined {
  try {
    return readOwnFile(path);
  } catch {
    return undefined;
  }
}

/** No steady expiry (an earlier version's file), or one as the store writes it. */
function isSteady(steady: unknown): boolean {
  if (steady === undefined) return true;
  if (typeof steady !== 'object' || steady === null) return false;
  const { clock, expiresAt, alive } = steady as Partial<SteadyExpiry>;
  const isNumber = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
  return typeof clock === 'string' && clock.length <= 200 && isNumber(expiresAt) && (alive === undefined || isNumber(alive));
}

/** Whether state.json still holds entries of the kinds kept one file each now (an earlier version wrote them). */
function hasLegacyEntries(state: GuardState): boolean {
  return (Object.keys(ENTRY_KINDS) as EntryKind[]).some((kind) => Object.keys(state[kind]).length > 0);
}

function parseEntry(text: string | undefined): (Kept<unknown> & { name?: unknown }) | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      typeof (parsed as { expiresAt?: unknown }).expiresAt === 'number' &&
      isSteady((parsed as Kept<unknown>).steady)
    )
      return parsed as Kept<unknown>;
  } catch {
    // Not JSON: the caller says it is damaged.
  }
  return undefined;
}

/**
 * Appends the entry's line to the audit file and answers the new head. The chain continues from
 * the file's own last line when that line is intact and further on than the state's head (state.json
 * lost or reset, or a process that died between the append and the state's write); otherwise from
 * the state's head, so lines cut from the file's end still show in verify.
 */
function appendChained(file: string, secret: Buffer, recorded: AuditHead | undefined, entry: AuditEntry): AuditHead {
  makeDirectories(dirname(file));
  const fd = openAuditFile(file);
  try {
    const { last, complete } = lastLine(fd);
    const fromFile = last === undefined ? undefined : headOfLine(secret, last);
    const head = fromFile && fromFile.seq > (recorded?.seq ?? 0) ? fromFile : (recorded ?? { seq: 0, mac: '' });
    const { line, head: next } = chainAuditLine(secret, head, entry);
    // A line cut short by a crash is left as it is (verify names it) and ours starts on a line of its own.
    fs.writeSync(fd, `${complete ? '' : '\n'}${line}\n`);
    return next;
  } finally {
    fs.closeSync(fd);
  }
}

/** Audit lines are far shorter; a longer last line is not looked for, and the state's head is used. */
const LAST_LINE_LIMIT = 64 * 1024;

/** The file's last line (without its newline), and whether the file ends with a newline (an empty one does). */
function lastLine(fd: number): { last: string | undefined; complete: boolean } {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return { last: undefined, complete: true };
  const length = Math.min(size, LAST_LINE_LIMIT);
  const buffer = Buffer.alloc(length);
  fs.readSync(fd, buffer, 0, length, size - length);
  const text = buffer.toString('utf8');
  const complete = text.endsWith('\n');
  const body = complete ? text.slice(0, -1) : text;
  const start = body.lastIndexOf('\n');
  if (start < 0 && length < size) return { last: undefined, complete };
  return { last: body.slice(start + 1), complete };
}

export function readSecret(dir: string): Buffer {
  const path = join(dir, SECRET_FILE);
  const text = readOwnFile(path);
  if (!isSecret(text)) throw new Error(`${path} is not a complete audit secret`);
  return Buffer.from(text.trim(), 'base64url');
}

/** Whether `text` is a whole secret as the servers write it (43 base64url characters; an earlier version's may end with a newline). */
function isSecret(text: string | undefined): text is string {
  return text !== undefined && text.trim().length >= 40;
}

/** The state as the store wrote it (empty if there is none yet); anything else is refused (guard-state.ts). */
export function readState(dir: string): GuardState {
  const path = join(dir, STATE_FILE);
  const text = readOwnFile(path);
  return text === undefined ? emptyState() : parseGuardState(text, path);
}

function writeState(dir: string, state: GuardState): void {
  writeAtomically(join(dir, STATE_FILE), JSON.stringify(state));
}

/**
 * A live write's last attempt; one in flight whose process stopped renewing it (it stopped with the
 * write out) is unknown: not renewed for the lease by the system clock, nor by the steady clock it
 * was renewed by (a system clock set forward makes a write still at the API look unrenewed). One
 * whose process this host can tell is dead (killed, crashed, its machine rebooted) is unknown at
 * once: nothing will ever settle it, so it is not "still being sent" for the rest of its lease.
 */
function sentWrite(entry: Kept<SentWrite> | undefined, now: number, steady: { clock: string; ms: number } | undefined) {
  const held = entry?.value;
  if (held?.outcome !== 'in-flight') return held;
  if (held.sender !== undefined && processIsDead(held.sender)) return { ...held, outcome: 'unknown' as const };
  const byClock = now - (held.alive ?? held.at) >= WRITE_MARK_LEASE_MS;
  const renewedAt = entry?.steady?.alive;
  const bySteady = renewedAt === undefined || steady === undefined || entry?.steady?.clock !== steady.clock || steady.ms - renewedAt >= WRITE_MARK_LEASE_MS;
  return byClock && bySteady ? { ...held, outcome: 'unknown' as const } : held;
}

/** When an attempt could first be seen by other servers: its `seen` where its turn noted one (not an earlier version's), else its time. */
function seenAt(attempt: SentWrite | SentWrite['before']): number {
  const seen = (attempt as Seen | undefined)?.seen;
  return typeof seen === 'number' && Number.isFinite(seen) && seen > (attempt?.at ?? 0) ? seen : (attempt?.at ?? 0);
}

/** The attempt's `seen`, carried over as its settle or a refusal's give-back rewrites it (none where it is its time). */
function seenOf(attempt: SentWrite | NonNullable<SentWrite['before']>): Seen {
  const seen = seenAt(attempt);
  return seen > attempt.at ? { seen } : {};
}

function live<T>(entry: Expiring<T> | undefined, now: number): T | undefined {
  return entry && entry.expiresAt > now ? entry.value : undefined;
}

function prune(state: GuardState, now: number): GuardState {
  for (const [name, entry] of Object.entries(state.counters)) if (entry.expiresAt <= now) delete state.counters[name];
  return state;
}

/** A record as its callers see it: an unsettled one whose process is gone is `stopped` (its answer will never come); its sender is the store's own. */
function unsettled(value: IdempotencyRecord & { sender?: unknown }): IdempotencyRecord {
  const { sender, ...record } = value;
  return !record.reply && typeof sender === 'string' && processIsDead(sender) ? { ...record, stopped: true } : record;
}
