// The guardrails' state for the stdio servers of one machine, in the user's state directory, read
// and rewritten under a lock file (created exclusively) and replaced by an atomic rename, so the
// seven server processes (and a restarted one) see one set of counters, one set of idempotency
// records and one audit chain. state.json holds the counters and the audit chain's head; each
// idempotency record and each confirmed write's last attempt is a small file of its own
// (records/, writes/), so a write reads and rewrites only its own entry, however many writes the
// last day held (one file for all made every write cost more than the one before). Every file is
// the owner's only (0600, folders 0700); a directory or file others could have changed, or a state
// file that is not what the store wrote, refuses the writes it is for (own-files.ts,
// guard-state.ts) instead of being trusted.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname, uptime } from 'node:os';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { chainAuditLine, headOfLine, type AuditEntry, type AuditHead } from './audit.js';
import { GuardStateError, type GuardStore, type IdempotencyRecord } from './guard-store.js';
import { damagedEntry, emptyState, isRecord, isSentWrite, parseGuardState, type Expiring, type GuardState, type SentWrite } from './guard-state.js';
import type { Attempt } from './journal.js';
import { WRITE_MARK_LEASE_MS } from './shared-mark.js';
import { makeDirectories } from './make-directories.js';
import { moveAsideCommand, openAuditFile, openOwnFile, openRegularFile, ownDirectory, readOwnFile, removeCommand } from './own-files.js';

export type { GuardState } from './guard-state.js';

const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a process that died holding it (a turn takes milliseconds). */
const LOCK_STALE_MS = 30_000;

/** How long a confirmed write's last attempt is kept: as long as a process's own journal keeps it (journal.ts). */
const WRITE_MEMORY_MS = 30 * 60 * 1000;

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

/**
 * A steady clock's reading, in milliseconds, and which clock it is. On Linux it is the machine's
 * time since boot (suspended time included, so a laptop asleep for two days has its records
 * expire as the system clock says), shared by every process of that boot (named by its boot id):
 * a server started after the system clock was set forward still knows how old an entry of this
 * boot is. Elsewhere it is this process's own monotonic clock, so only the process that wrote an
 * entry can tell; any other falls back to the system clock.
 */
export type SteadyClock = () => { clock: string; ms: number };

let bootId: string | null | undefined;
const processClock = `process ${process.pid} ${randomBytes(6).toString('hex')}`;

export const systemSteadyClock: SteadyClock = () => {
  bootId ??= readBootId();
  return bootId ? { clock: `boot ${bootId}`, ms: uptime() * 1000 - bootTimeOffset() } : { clock: processClock, ms: performance.now() };
};

let timeOffset: number | undefined;

/**
 * How far this process's time since boot is set off from the machine's (a Linux time namespace: a
 * container restored by CRIU, or started with `unshare --time --boottime`), in ms; taken off, every
 * process of the boot reads one clock. 0 where there is none to read.
 */
function bootTimeOffset(): number {
  if (timeOffset !== undefined) return timeOffset;
  timeOffset = 0;
  try {
    const line = /^boottime\s+(-?\d+)\s+(-?\d+)\s*$/m.exec(fs.readFileSync('/proc/self/timens_offsets', 'utf8'));
    if (line) timeOffset = Number(line[1]) * 1000 + Number(line[2]) / 1e6;
  } catch {
    // No time namespaces (an older kernel): nothing is set off.
  }
  return timeOffset;
}

function readBootId(): string | null {
  if (process.platform !== 'linux') return null;
  try {
    const id = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return /^[0-9a-f-]{36}$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

export class FileGuardStore implements GuardStore {
  private secret: Buffer | undefined;

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
    return this.entryTurn('records', key, (held) =>
      held ? { result: unsettled(held.value), entry: 'unchanged' } : { result: undefined, entry: { value: { ...record, sender: thisProcess() }, expiresAt } },
    );
  }

  settle(key: string, reply: CallToolResult | undefined) {
    return this.entryTurn('records', key, (held) => {
      if (!held) return { result: undefined, entry: 'unchanged' };
      return { result: undefined, entry: reply === undefined ? undefined : { ...held, value: { ...held.value, reply } } };
    });
  }

  /**
   * Confirmed writes' last attempts, shared by the stdio processes of this machine (and kept over a
   * restart), as Redis keeps them for remote replicas: the claim refuses a write in flight, or sent
   * since the yes (`approvedAt`), and marks it in flight in one turn under the lock.
   */
  claimWrite(write: string, id: string, approvedAt: number, now: number) {
    return this.entryTurn('writes', write, (entry): EntryChange<SentWrite, Attempt | undefined> => {
      const held = sentWrite(entry && this.unexpired(entry, now) ? entry : undefined, now, this.steady?.());
      if (held && (held.outcome === 'in-flight' || held.at >= approvedAt)) return { result: { at: held.at, outcome: held.outcome }, entry: 'unchanged' };
      const before = held && held.outcome !== 'in-flight' ? { at: held.at, outcome: held.outcome } : undefined;
      const value: SentWrite = { at: now, outcome: 'in-flight', owner: id, alive: now, sender: thisProcess(), ...(before ? { before } : {}) };
      return { result: undefined, entry: this.renewed(value, now + WRITE_MEMORY_MS) };
    });
  }

  renewWrite(write: string, id: string, now: number) {
    return this.entryTurn('writes', write, (entry): EntryChange<SentWrite, void> => {
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return { result: undefined, entry: 'unchanged' };
      return { result: undefined, entry: this.renewed({ ...entry.value, alive: now }, now + WRITE_MEMORY_MS) };
    });
  }

  settleWrite(write: string, id: string, outcome: 'done' | 'unknown' | 'refused') {
    return this.entryTurn('writes', write, (entry): EntryChange<SentWrite, void> => {
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return { result: undefined, entry: 'unchanged' };
      const { before } = entry.value;
      if (outcome === 'refused') return { result: undefined, entry: before ? { ...entry, value: before } : undefined };
      return { result: undefined, entry: { value: { at: entry.value.at, outcome }, expiresAt: this.now() + WRITE_MEMORY_MS } };
    });
  }

  async lastSentWrite(write: string, now: number) {
    await this.migrated();
    const entry = this.readEntry('writes', write);
    const held = sentWrite(entry && this.unexpired(entry, now) ? entry : undefined, now, this.steady?.());
    return held && { at: held.at, outcome: held.outcome };
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
    return this.locked(() => {
      const state = readState(this.dir);
      const result = change(state);
      writeState(this.dir, prune(state, this.now()));
      return result;
    });
  }

  /** One turn with one entry's own file (its expired entry reads as none). */
  private entryTurn<K extends EntryKind, R>(
    kind: K,
    name: string,
    change: (entry: Kept<EntryValue<K>> | undefined) => EntryChange<EntryValue<K>, R>,
  ): Promise<R> {
    return this.locked(() => {
      const path = this.entryPath(kind, name);
      const current = this.readEntry(kind, name);
      const { result, entry } = change(current && this.unexpired(current) ? current : undefined);
      if (entry === undefined) {
        if (current) removeEntry(path);
      } else if (entry !== 'unchanged') writeAtomically(path, JSON.stringify({ name, ...this.withSteady(entry) }), { durable: true });
      return result;
    });
  }

  /**
   * Under the lock: entries an earlier version kept in state.json move to their own files first, on
   * every turn (a process of that version, not yet restarted, may have added one since the last),
   * and expired ones are swept now and then.
   */
  private async locked<T>(work: () => T): Promise<T> {
    ownDirectory(this.dir);
    const release = await lock(join(this.dir, 'state.lock'));
    try {
      const state = readState(this.dir);
      if (this.moveLegacyEntries(state)) writeState(this.dir, state);
      this.sweepIfDue();
      return work();
    } finally {
      release();
    }
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

  /** Removes expired entries' files and temporary files a crashed process left; a damaged file is left for the user (reading it names it). */
  private sweepIfDue(): void {
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
    for (const kind of Object.keys(ENTRY_KINDS) as EntryKind[]) {
      const folder = this.entryFolder(kind);
      for (const file of fs.readdirSync(folder)) sweepOne(join(folder, file), now, undefined, (entry) => this.unexpired(entry, now));
    }
  }

  /** Whether the entry is live: by the system clock, or by the steady clock it was written by (when this process reads that clock). */
  private unexpired(entry: Kept<unknown>, now = this.now()): boolean {
    if (entry.expiresAt > now) return true;
    if (!entry.steady || !this.steady) return false;
    const reading = this.steady();
    return entry.steady.clock === reading.clock && entry.steady.expiresAt > reading.ms;
  }

  /** A write in flight, marked or renewed now: when, by the steady clock too (its lease is counted by either clock). */
  private renewed(value: SentWrite, expiresAt: number): Kept<SentWrite> {
    if (!this.steady) return { value, expiresAt };
    const reading = this.steady();
    return { value, expiresAt, steady: { clock: reading.clock, expiresAt: reading.ms + (expiresAt - this.now()), alive: reading.ms } };
  }

  /**
   * The entry with its expiry by the steady clock: one it carries over (the same expiry) by this
   * clock is kept; else (none, or another boot's) it is read now, from what the system clock leaves.
   */
  private withSteady<T>(entry: Kept<T>): Kept<T> {
    if (!this.steady) return entry;
    const reading = this.steady();
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
  private readEntry<K extends EntryKind>(kind: K, name: string): Kept<EntryValue<K>> | undefined {
    const path = this.entryPath(kind, name);
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
function sweepOne(path: string, now: number, leftByCrash = path.endsWith('.tmp'), unexpired?: (entry: Kept<unknown>) => boolean): void {
  try {
    if (leftByCrash) {
      // A file's time is the system clock's, whatever clock the store was given.
      // A lock moved aside keeps its own time: when it was moved (its ctime) says whether its breaker is done with it.
      const stat = fs.lstatSync(path);
      const since = path.includes('.stale-') ? Math.max(stat.mtimeMs, stat.ctimeMs) : stat.mtimeMs;
      if (Date.now() - since > LOCK_STALE_MS) fs.rmSync(path, { force: true });
      return;
    }
    const entry = parseEntry(readOwnFile(path));
    if (entry && !(unexpired ? unexpired(entry) : entry.expiresAt > now)) fs.rmSync(path, { force: true });
  } catch {
    // Not a file the store wrote: left for the write it is for to name.
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

/**
 * `text` at `path` unless a file is there already: written beside and synced, then linked into
 * place, so it appears whole. A file system without hard links has it created exclusively instead.
 */
function createWhole(path: string, text: string): void {
  const temporary = writtenBeside(path, text, { sync: true });
  try {
    fs.linkSync(temporary, path);
    syncFolder(dirname(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw notSaved(path, error);
    try {
      fs.writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
    } catch (fallback) {
      if ((fallback as NodeJS.ErrnoException).code !== 'EEXIST') throw notSaved(path, fallback);
    }
  } finally {
    removeQuietly(temporary);
  }
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
 * Written to a temporary file, synced, then renamed over `path`: a reader sees the old text or the
 * new, never part of one. A write that fails (a full disk, an I/O error) leaves no temporary file
 * and nothing at `path` changed, and is refused as state that could not be saved (notSaved).
 * `durable`: the folder is synced after the rename too, so a power loss seconds later does not
 * take the file back (an idempotency record or a write's claim, made just before its write was
 * sent: without it, the repeat after the reboot would be sent again).
 */
function writeAtomically(path: string, text: string, { durable = false }: { durable?: boolean } = {}): void {
  const temporary = writtenBeside(path, text, { sync: true });
  try {
    fs.renameSync(temporary, path);
  } catch (error) {
    removeQuietly(temporary);
    throw notSaved(path, error);
  }
  if (durable) syncFolder(dirname(path));
}

/**
 * Syncs a folder's entries to the disk. Best effort: the file itself is written and synced, and a
 * platform that cannot sync a folder (Windows, some file systems) or a disk that fails it refuses
 * nothing (the turn's change is made either way).
 */
function syncFolder(folder: string): void {
  let fd: number;
  try {
    fd = fs.openSync(folder, fs.constants.O_RDONLY);
  } catch {
    return;
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    // Refused by the platform, or failed: the file is there all the same.
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * `text` in a new temporary file beside `path` (created exclusively: a file or link already at that
 * name is never written through), closed, and synced if asked; its name. On a failure nothing is
 * left, and the turn is refused as state that could not be saved.
 */
function writtenBeside(path: string, text: string, { sync }: { sync: boolean }): string {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  let fd: number;
  try {
    fd = openOwnFile(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL);
  } catch (error) {
    throw notSaved(path, error);
  }
  try {
    try {
      writeWhole(fd, text);
      if (sync) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return temporary;
  } catch (error) {
    removeQuietly(temporary);
    throw notSaved(path, error);
  }
}

/** All of `text`: a write may take only part of it (a disk nearly full), and the rest is written on (or fails). */
function writeWhole(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at, bytes.length - at);
}

/** An entry's file removed (its key forgotten, its attempt given back); one that cannot be is refused like a write that could not be saved. */
function removeEntry(path: string): void {
  try {
    fs.rmSync(path, { force: true });
  } catch (error) {
    throw notSaved(path, error);
  }
}

function removeQuietly(path: string): void {
  try {
    fs.rmSync(path, { force: true });
  } catch {
    // Left for the sweep (a temporary file older than any turn is removed).
  }
}

/**
 * `work` on `path`, a file or folder every write needs (the state directory, the audit record): a
 * failure of the file system (read-only, a folder where a file goes) refuses the write, saying what
 * it is, rather than reading as the server's internal error.
 */
function usable(path: string, work: () => void): void {
  try {
    work();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // What the file system says of itself; anything else (a path under /proc) stays the server's failure, as before.
    if (error instanceof GuardStateError || code === undefined || !(code === 'EISDIR' || code in NOT_SAVED_BECAUSE)) throw error;
    if (code === 'EISDIR')
      throw new GuardStateError(`${path} is a folder where the servers keep a file, so no write can be recorded. Move it aside (${moveAsideCommand(path)})`);
    throw new GuardStateError(
      `${path} cannot be written (${NOT_SAVED_BECAUSE[code] ?? (error as Error).message}, ${code}), so the send caps, idempotency keys, earlier sends and the audit record cannot be kept. ${whatToDo(code)} and ask again`,
    );
  }
}

/** What the user does about a file system's failure. */
function whatToDo(code: string | undefined): string {
  if (code === 'EROFS') return 'Make that file system writable again, or set ENGAGE_STATE_DIR (and ENGAGE_AUDIT_LOG, if set) to a folder on one that is,';
  if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG') return 'Free space on that disk';
  if (code === 'EACCES' || code === 'EPERM')
    return 'Let this user write there (chmod u+w on the folder, if it is its own), or set ENGAGE_STATE_DIR (and ENGAGE_AUDIT_LOG, if set) to a folder it may write,';
  return 'Fix the error';
}

const NOT_SAVED_BECAUSE: Record<string, string> = {
  ENOSPC: 'no space left on its disk',
  EDQUOT: "the user's disk quota is used up",
  EFBIG: 'a file size limit was reached',
  EIO: 'an input/output error of its disk',
  EROFS: 'its file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/**
 * A state file that could not be written: the write it is for is refused (nothing is sent), and the
 * model and the log are told why and what the user does. A refusal of the store's own (a planted
 * link) is passed on as it is.
 */
function notSaved(path: string, error: unknown): Error {
  if (error instanceof GuardStateError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const why = (code && NOT_SAVED_BECAUSE[code]) ?? (error instanceof Error ? error.message : String(error));
  return new GuardStateError(
    `the guardrails' state could not be saved in ${dirname(path)} (${why}${code ? `, ${code}` : ''}), so the send caps, idempotency keys and earlier sends cannot be kept. ` +
      `${whatToDo(code)} and ask again`,
  );
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

function live<T>(entry: Expiring<T> | undefined, now: number): T | undefined {
  return entry && entry.expiresAt > now ? entry.value : undefined;
}

function prune(state: GuardState, now: number): GuardState {
  for (const [name, entry] of Object.entries(state.counters)) if (entry.expiresAt <= now) delete state.counters[name];
  return state;
}

/**
 * Takes the lock file, waiting for another process's turn; a lock left by a dead process is broken.
 * The lock appears with its owner already in it (written to a file of its own, then linked into
 * place, which fails if a lock is there): a live process's lock is never seen empty, so an empty
 * or unreadable one (its process killed between creating it and writing its owner, by an earlier
 * version; or cut by a power loss) is nobody's, and is broken once it has stayed so for a moment
 * (an earlier version's process, alive, writes its owner within microseconds). On Linux the owner
 * is also named by its start time and where its pid means it (`pid host/start/place nonce`), so a
 * lock whose pid a new process was given after its owner died is seen to be dead, and one of another
 * pid namespace or machine is not looked up here; an earlier version reads such a lock as another
 * host's, broken only once it is 30 s old.
 */
async function lock(path: string): Promise<() => void> {
  const mine = `${process.pid} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  const ownerless = new Map<string, number>();
  for (let wait = 2; ; wait = Math.min(wait * 2, 25)) {
    if (takeLock(path, mine)) return () => releaseLock(path, mine);
    breakIfStale(path, ownerless);
    if (Date.now() > deadline) throw lockedBy(path);
    await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
  }
}

/** True if the lock is now `mine`; false if another's is there. A disk that takes no file refuses the turn (notSaved). */
function takeLock(path: string, mine: string): boolean {
  const temporary = writtenBeside(path, mine, { sync: false });
  try {
    fs.linkSync(temporary, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links (some network and removable ones): created exclusively with its owner, as before.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return takeLockWithoutLink(path, mine);
    throw notSaved(path, error);
  } finally {
    removeQuietly(temporary);
  }
}

function takeLockWithoutLink(path: string, mine: string): boolean {
  let fd: number;
  try {
    fd = openOwnFile(path, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw notSaved(path, error);
  }
  try {
    writeWhole(fd, mine);
  } catch (error) {
    fs.closeSync(fd);
    removeQuietly(path);
    throw notSaved(path, error);
  }
  fs.closeSync(fd);
  return true;
}

function releaseLock(path: string, mine: string): void {
  try {
    if (readLock(path)?.holder === mine) fs.unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

/** How much of a lock file is read: an owner is a pid, a host name and a nonce; anything longer is nobody's. */
const LOCK_READ_LIMIT = 512;
/** An ownerless lock (empty, or not an owner) that stays so this long, as this process saw it, is broken. */
const LOCK_OWNERLESS_MS = 1_000;

/**
 * The lock's holder as read, and the file's identity, without following a link or waiting on a
 * FIFO; undefined if there is none. A lock that is not a regular file is refused (the servers never
 * make one): every turn would otherwise wait on it.
 */
function readLock(path: string): { holder: string; id: string; mtimeMs: number } | undefined {
  const opened = openRegularFile(
    path,
    () => `the lock file ${path} is not a file the servers made, so no write can take its turn. Remove it (${removeCommand(path)})`,
  );
  if (!opened) return undefined;
  const { fd, stat } = opened;
  try {
    const buffer = Buffer.alloc(LOCK_READ_LIMIT);
    const length = fs.readSync(fd, buffer, 0, LOCK_READ_LIMIT, 0);
    return { holder: buffer.toString('utf8', 0, length), id: `${stat.dev}:${stat.ino}`, mtimeMs: stat.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A lock whose process is gone (on this host), that nobody owns (empty or garbage, for a moment as
 * this process saw it), or that is far older than any turn, is moved aside (one process wins the
 * rename) and removed. `ownerless` keeps when this process first saw each ownerless lock, by the
 * monotonic clock: the system clock going back makes no lock older or younger.
 */
function breakIfStale(path: string, ownerless: Map<string, number>): void {
  let lock: ReturnType<typeof readLock>;
  try {
    lock = readLock(path);
  } catch (error) {
    if (error instanceof GuardStateError) throw error;
    return;
  }
  if (!lock) return;
  const owner = ownerOf(lock.holder);
  const age = Date.now() - lock.mtimeMs;
  let stale = age >= LOCK_STALE_MS;
  if (owner) {
    // Another host's process is not this host's to look up: only its lock's age says it stopped.
    // A lock of this host's earlier boot (left by a crash before a reboot) is its process's, gone with that boot.
    const alive = owner.earlierBoot ? 'dead' : owner.here ? liveness(owner.pid, owner.start) : 'unknown';
    // Its owner itself, alive on this host, holds it however old it looks (a clock set forward since, a turn slowed by its disk): never broken.
    if (alive === 'owner') return;
    // On Linux an owner named without its place may be of another pid namespace with this host's name
    // (a container that cannot read its boot id): its pid not being alive here says nothing; its age does.
    const placeless = owner.place === undefined && process.platform === 'linux';
    stale ||= alive === 'dead' && (owner.earlierBoot || !placeless);
  } else {
    const seen = ownerless.get(lock.id) ?? performance.now();
    ownerless.set(lock.id, seen);
    stale ||= performance.now() - seen >= LOCK_OWNERLESS_MS;
  }
  if (!stale) return;
  const aside = `${path}.stale-${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(path, aside);
  } catch {
    return; // Lost the race to another process breaking it: fine.
  }
  try {
    // Another process may have broken it and taken a fresh lock in between: that one goes back.
    const moved = fs.lstatSync(aside);
    if (`${moved.dev}:${moved.ino}` !== lock.id) fs.linkSync(aside, path);
  } catch {
    // A lock taken meanwhile at the path: this one's owner finds its lock gone when it releases.
  } finally {
    removeQuietly(aside);
  }
}

/** A record as its callers see it: an unsettled one whose process is gone is `stopped` (its answer will never come); its sender is the store's own. */
function unsettled(value: IdempotencyRecord & { sender?: unknown }): IdempotencyRecord {
  const { sender, ...record } = value;
  return !record.reply && typeof sender === 'string' && processIsDead(sender) ? { ...record, stopped: true } : record;
}

let processName: string | undefined;

/** This process as a lock names its owner (`pid host/start/place nonce`), the same for all its writes. */
function thisProcess(): string {
  processName ??= `${process.pid} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`;
  return processName;
}

/**
 * Whether the process a write's mark or a key's reservation names is known to be dead (this host's,
 * where its pid means it); unknown is not dead. On Linux a name without its place (a process that
 * could not read its boot id: a systemd unit with ProcSubset=pid, a container masking /proc/sys)
 * may be of another pid namespace with this host's name (a container on the host's network), its
 * pid not this one's to look up: it is left to the lease, as a mark without a sender is.
 */
function processIsDead(name: string): boolean {
  const owner = ownerOf(name);
  if (!owner) return false;
  if (owner.earlierBoot) return true;
  if (owner.place === undefined && process.platform === 'linux') return false;
  return owner.here && liveness(owner.pid, owner.start) === 'dead';
}

/** A lock's owner as the servers write it (`pid host/start nonce`; earlier, `pid host nonce` or `pid nonce`), undefined for anything else. */
function ownerOf(
  holder: string,
): { pid: number; host: string | undefined; here: boolean; earlierBoot: boolean; start: string | undefined; place: string | undefined } | undefined {
  const owner = /^(\d+) (?:(\S+?)(?:\/(\d+)(?:\/([0-9a-f]{16}))?)? )?[0-9a-f]{12}$/.exec(holder);
  if (!owner) return undefined;
  // Its pid is one this process can look up only on the same host, and (where the lock says) in the same boot and pid namespace.
  const sameHost = owner[2] === undefined || owner[2] === hostname();
  const place = owner[4];
  const ours = placeOfPids();
  const earlierBoot = sameHost && place !== undefined && ours !== null && place.slice(0, 8) !== ours.slice(0, 8);
  const here = sameHost && (place === undefined || place === ours);
  return { pid: Number(owner[1]), host: owner[2], here, earlierBoot, start: owner[3], place };
}

let ownMark: string | undefined;

/** `/start/place` for this process's lock (see placeOfPids), or `` where the start time cannot be read. */
function ownStartAndPlace(): string {
  if (ownMark !== undefined) return ownMark;
  const start = startTimeOf('self');
  const place = placeOfPids();
  ownMark = typeof start === 'string' ? `/${start}${place ? `/${place}` : ''}` : '';
  return ownMark;
}

let pidPlace: string | null | undefined;

/**
 * Where this process's pids mean what they mean (on Linux: this boot of this machine, then its pid
 * namespace and any offset of its boot time, 8 hex digits of a digest each): a lock from a container in another pid namespace names
 * a pid that is not this one's to look up, and one from another boot (left by a crash before a
 * reboot) names a process that is gone. Null where it cannot be read, or where /proc is not this
 * pid namespace's (its names then carry no place, and are left to their lease).
 */
function placeOfPids(): string | null {
  if (pidPlace !== undefined) return pidPlace;
  pidPlace = null;
  bootId ??= readBootId();
  if (bootId)
    try {
      // A /proc that shows this process under another pid is not its pid namespace's (a namespace
      // made without a /proc of its own: unshare --pid without --mount-proc, bwrap --unshare-pid over
      // the host's /proc): /proc/<pid> there is another process, so no pid is looked up by it.
      if (fs.readlinkSync('/proc/self') !== String(process.pid)) return pidPlace;
      const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);
      // Start times in /proc are as the reader's time namespace sees them: a process whose boot time
      // is set off (bootTimeOffset) reads every start time off by as much, so that offset is part of its place.
      const offset = bootTimeOffset();
      const pids = fs.readlinkSync('/proc/self/ns/pid');
      pidPlace = `${digest(bootId)}${digest(offset === 0 ? pids : `${pids} boottime ${offset}`)}`;
    } catch {
      // No pid namespace to read: the lock names no place, and is looked up by host name, as before.
    }
  return pidPlace;
}

/**
 * Whether a lock's owner on this host is alive: 'dead' if its pid is not, or (where the lock names
 * its start time, and this host can read it) the process with that pid started at another time (it
 * was given the pid after the owner died); 'owner' if the process is the owner itself, its start
 * time the same; 'unknown' if the pid is alive but nothing says whose it is (an earlier lock, or
 * no /proc): it may have been given to another process, so the lock's age still counts. A zombie
 * (killed, its parent not yet waiting for it: a container's init that reaps no orphans) answers
 * signal 0 as a live process does, and is dead.
 */
function liveness(pid: number, start: string | undefined): 'dead' | 'owner' | 'unknown' {
  if (!Number.isSafeInteger(pid) || pid <= 0) return 'dead';
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'dead';
  }
  const stat = statOf(pid);
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return 'dead';
  if (start === undefined) return 'unknown';
  const now = stat === null ? null : stat?.start;
  if (now === undefined) return 'unknown';
  return now === start ? 'owner' : 'dead';
}

/**
 * The turn that waited its 10 s for the lock is refused (nothing is sent), naming who holds it: a
 * live process of this host holds it however long it takes, so one that stays stuck (stopped, or
 * on a disk that does not answer) is the user's to stop.
 */
function lockedBy(path: string): GuardStateError {
  let holder: string | undefined;
  try {
    holder = readLock(path)?.holder;
  } catch {
    // Not readable now: said as another process.
  }
  const owner = holder === undefined ? undefined : ownerOf(holder);
  const who = !owner
    ? 'another process'
    : owner.here
      ? `process ${owner.pid} of this host`
      : owner.host === hostname()
        ? `a process (${owner.pid}) in another pid namespace of this host (a container sharing this state directory)`
        : `a process (${owner.pid}) of the host ${owner.host}, which shares this state directory`;
  return new GuardStateError(
    `the guardrails' state is locked by ${who} (${path}), and was still locked after ${LOCK_WAIT_MS / 1000} s; try again in a moment. If it stays locked, that process is stuck: stop it`,
  );
}

/**
 * A process's start time (clock ticks after boot: field 22 of /proc/<pid>/stat), which a pid
 * given again to a new process does not share; null if there is no such process, undefined where
 * it cannot be read (not Linux, no /proc).
 */
function startTimeOf(pid: number | 'self'): string | null | undefined {
  const stat = statOf(pid);
  return stat === null ? null : stat?.start;
}

/**
 * A process's state (field 3 of /proc/<pid>/stat: R, S, Z for a zombie, …) and start time (see
 * startTimeOf, undefined where it cannot be read); null if there is no such process, undefined
 * where /proc/<pid>/stat cannot be read (not Linux, no /proc).
 */
function statOf(pid: number | 'self'): { state: string | undefined; start: string | undefined } | null | undefined {
  if (process.platform !== 'linux') return undefined;
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' && pid !== 'self' && fs.existsSync('/proc/self/stat') ? null : undefined;
  }
  // The command's name (field 2) is in parentheses and may hold spaces and parentheses itself: the fields after it are counted from the last.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return { state: fields[0], start: start !== undefined && /^\d+$/.test(start) ? start : undefined };
}
