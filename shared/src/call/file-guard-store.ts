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
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { chainAuditLine, headOfLine, type AuditEntry, type AuditHead } from './audit.js';
import { GuardStateError, type GuardStore, type IdempotencyRecord } from './guard-store.js';
import { damagedEntry, emptyState, isRecord, isSentWrite, parseGuardState, type Expiring, type GuardState, type SentWrite } from './guard-state.js';
import type { Attempt } from './journal.js';
import { WRITE_MARK_LEASE_MS } from './shared-mark.js';
import { makeDirectories } from './make-directories.js';
import { openAuditFile, openOwnFile, openRegularFile, ownDirectory, readOwnFile, removeCommand } from './own-files.js';

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
type EntryChange<T, R> = { result: R; entry: Expiring<T> | undefined | 'unchanged' };

export class FileGuardStore implements GuardStore {
  private secret: Buffer | undefined;

  constructor(
    private readonly dir: string,
    private readonly auditFile: string = join(dir, 'audit.jsonl'),
    private readonly now: () => number = Date.now,
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
    return live(this.readEntry('records', key), this.now());
  }

  reserve(key: string, record: IdempotencyRecord, expiresAt: number) {
    return this.entryTurn('records', key, (held) =>
      held ? { result: held.value, entry: 'unchanged' } : { result: undefined, entry: { value: record, expiresAt } },
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
      const held = sentWrite(entry, now);
      if (held && (held.outcome === 'in-flight' || held.at >= approvedAt)) return { result: { at: held.at, outcome: held.outcome }, entry: 'unchanged' };
      const before = held && held.outcome !== 'in-flight' ? { at: held.at, outcome: held.outcome } : undefined;
      const value: SentWrite = { at: now, outcome: 'in-flight', owner: id, alive: now, ...(before ? { before } : {}) };
      return { result: undefined, entry: { value, expiresAt: now + WRITE_MEMORY_MS } };
    });
  }

  renewWrite(write: string, id: string, now: number) {
    return this.entryTurn('writes', write, (entry): EntryChange<SentWrite, void> => {
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return { result: undefined, entry: 'unchanged' };
      return { result: undefined, entry: { value: { ...entry.value, alive: now }, expiresAt: now + WRITE_MEMORY_MS } };
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
    const held = sentWrite(this.readEntry('writes', write), now);
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
    ownDirectory(this.dir);
    readState(this.dir);
    // A lock no turn can take (not a file the servers make) would let the write out and lose its audit line: refused first.
    readLock(join(this.dir, 'state.lock'));
    makeDirectories(dirname(this.auditFile));
    fs.closeSync(openAuditFile(this.auditFile));
  }

  /** Created once, exclusively: the first process to write makes it, every later one reads it. */
  async auditSecret() {
    if (this.secret) return this.secret;
    ownDirectory(this.dir);
    const path = join(this.dir, SECRET_FILE);
    try {
      fs.writeFileSync(path, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
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
    change: (entry: Expiring<EntryValue<K>> | undefined) => EntryChange<EntryValue<K>, R>,
  ): Promise<R> {
    return this.locked(() => {
      const path = this.entryPath(kind, name);
      const current = this.readEntry(kind, name);
      const { result, entry } = change(current && current.expiresAt > this.now() ? current : undefined);
      if (entry === undefined) {
        if (current) removeEntry(path);
      } else if (entry !== 'unchanged') writeAtomically(path, JSON.stringify({ name, ...entry }));
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
        let current: Expiring<IdempotencyRecord | SentWrite> | undefined;
        try {
          current = this.readEntry(kind, name);
        } catch (error) {
          if (error instanceof GuardStateError) continue;
          throw error;
        }
        const unexpired = (held: Expiring<unknown> | undefined) => held !== undefined && held.expiresAt > this.now();
        const later = kind === 'writes' && current !== undefined && entry.value.at > current.value.at;
        if (unexpired(entry) && (!unexpired(current) || later)) writeAtomically(this.entryPath(kind, name), JSON.stringify({ name, ...entry }));
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
    // state.json's own temporary files, and the lock's (and a lock moved aside), left by a process killed mid-turn.
    for (const file of fs.readdirSync(this.dir))
      if ((file.startsWith(`${STATE_FILE}.`) || file.startsWith('state.lock.')) && (file.endsWith('.tmp') || file.includes('.stale-')))
        sweepOne(join(this.dir, file), now, true);
    for (const kind of Object.keys(ENTRY_KINDS) as EntryKind[]) {
      const folder = this.entryFolder(kind);
      for (const file of fs.readdirSync(folder)) sweepOne(join(folder, file), now);
    }
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
  private readEntry<K extends EntryKind>(kind: K, name: string): Expiring<EntryValue<K>> | undefined {
    const path = this.entryPath(kind, name);
    const text = readOwnFile(path);
    if (text === undefined) return undefined;
    const entry = parseEntry(text);
    if (!entry) throw damagedEntry(path, 'it is not what the servers write');
    const { name: written, ...rest } = entry;
    if (written !== name || !ENTRY_KINDS[kind](rest)) throw damagedEntry(path, 'it is not what the servers write');
    return rest as Expiring<EntryValue<K>>;
  }
}

/**
 * Removes one expired entry, or a temporary file a crash left. Anything else (a damaged file, a
 * folder, a link) is left as it is: the write it is for names it, and one odd file never holds up
 * every other write's turn.
 */
function sweepOne(path: string, now: number, leftByCrash = path.endsWith('.tmp')): void {
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
    if (entry && entry.expiresAt <= now) fs.rmSync(path, { force: true });
  } catch {
    // Not a file the store wrote: left for the write it is for to name.
  }
}

/** Whether state.json still holds entries of the kinds kept one file each now (an earlier version wrote them). */
function hasLegacyEntries(state: GuardState): boolean {
  return (Object.keys(ENTRY_KINDS) as EntryKind[]).some((kind) => Object.keys(state[kind]).length > 0);
}

function parseEntry(text: string | undefined): (Expiring<unknown> & { name?: unknown }) | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { expiresAt?: unknown }).expiresAt === 'number') return parsed as Expiring<unknown>;
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
  // The secret may be mid-write by another process for an instant; an empty read is retried by the caller's next call.
  const path = join(dir, SECRET_FILE);
  const text = (readOwnFile(path) ?? '').trim();
  if (text.length < 40) throw new Error(`${path} is not a complete audit secret`);
  return Buffer.from(text, 'base64url');
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
 */
function writeAtomically(path: string, text: string): void {
  const temporary = writtenBeside(path, text, { sync: true });
  try {
    fs.renameSync(temporary, path);
  } catch (error) {
    removeQuietly(temporary);
    throw notSaved(path, error);
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
      'Free space on that disk (or fix the error) and ask again',
  );
}

/** A write's last attempt; one in flight whose process stopped renewing it (it stopped with the write out) is unknown. */
function sentWrite(entry: Expiring<SentWrite> | undefined, now: number) {
  const held = live(entry, now);
  if (held?.outcome === 'in-flight' && now - (held.alive ?? held.at) >= WRITE_MARK_LEASE_MS) return { ...held, outcome: 'unknown' as const };
  return held;
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
 * (an earlier version's process, alive, writes its owner within microseconds).
 */
async function lock(path: string): Promise<() => void> {
  const mine = `${process.pid} ${hostname()} ${randomBytes(6).toString('hex')}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  const ownerless = new Map<string, number>();
  for (let wait = 2; ; wait = Math.min(wait * 2, 25)) {
    if (takeLock(path, mine)) return () => releaseLock(path, mine);
    breakIfStale(path, ownerless);
    if (Date.now() > deadline) throw new Error(`the guardrails' state is locked by another process (${path}); try again`);
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
  const owner = /^(\d+) (?:(\S+) )?[0-9a-f]{12}$/.exec(lock.holder);
  const age = Date.now() - lock.mtimeMs;
  let stale = age >= LOCK_STALE_MS;
  if (owner) {
    // Another host's process is not this host's to look up: only its lock's age says it stopped.
    const here = owner[2] === undefined || owner[2] === hostname();
    stale ||= here && !isAlive(Number(owner[1]));
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

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
