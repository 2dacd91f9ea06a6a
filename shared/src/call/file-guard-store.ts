// The guardrails' state for the stdio servers of one machine: a JSON file in the user's state
// directory, read and rewritten under a lock file (created exclusively) and replaced by an atomic
// rename, so the seven server processes (and a restarted one) see one set of counters, one set of
// idempotency records and one audit chain. Every file is the owner's only (0600, directory 0700);
// a directory or file others could have changed, or a state file that is not what the store
// wrote, refuses every write (own-files.ts, guard-state.ts) instead of being trusted.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { chainAuditLine, headOfLine, type AuditEntry, type AuditHead } from './audit.js';
import type { GuardStore, IdempotencyRecord } from './guard-store.js';
import { emptyState, parseGuardState, type Expiring, type GuardState } from './guard-state.js';
import type { Attempt } from './journal.js';
import { WRITE_MARK_LEASE_MS } from './shared-mark.js';
import { openAuditFile, openOwnFile, ownDirectory, readOwnFile } from './own-files.js';

export type { GuardState } from './guard-state.js';

const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a process that died holding it (a turn takes milliseconds). */
const LOCK_STALE_MS = 30_000;

/** How long a confirmed write's last attempt is kept: as long as a process's own journal keeps it (journal.ts). */
const WRITE_MEMORY_MS = 30 * 60 * 1000;

export const STATE_FILE = 'state.json';
export const SECRET_FILE = 'audit.key';

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
    ownDirectory(this.dir);
    return live(readState(this.dir).records[key], this.now());
  }

  reserve(key: string, record: IdempotencyRecord, expiresAt: number) {
    return this.turn((state) => {
      const held = live(state.records[key], this.now());
      if (held) return held;
      state.records[key] = { value: record, expiresAt };
      return undefined;
    });
  }

  settle(key: string, reply: CallToolResult | undefined) {
    return this.turn((state) => {
      const entry = state.records[key];
      if (!entry) return;
      if (reply === undefined) delete state.records[key];
      else entry.value = { ...entry.value, reply };
    });
  }

  /**
   * Confirmed writes' last attempts, shared by the stdio processes of this machine (and kept over a
   * restart), as Redis keeps them for remote replicas: the claim refuses a write in flight, or sent
   * since the yes (`approvedAt`), and marks it in flight in one turn under the lock.
   */
  claimWrite(write: string, id: string, approvedAt: number, now: number) {
    return this.turn((state): Attempt | undefined => {
      const held = sentWrite(state, write, now);
      if (held && (held.outcome === 'in-flight' || held.at >= approvedAt)) return { at: held.at, outcome: held.outcome };
      const before = held && held.outcome !== 'in-flight' ? { at: held.at, outcome: held.outcome } : undefined;
      state.writes[write] = {
        value: { at: now, outcome: 'in-flight', owner: id, alive: now, ...(before ? { before } : {}) },
        expiresAt: now + WRITE_MEMORY_MS,
      };
      return undefined;
    });
  }

  renewWrite(write: string, id: string, now: number) {
    return this.turn((state) => {
      const entry = state.writes[write];
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return;
      entry.value.alive = now;
      entry.expiresAt = now + WRITE_MEMORY_MS;
    });
  }

  settleWrite(write: string, id: string, outcome: 'done' | 'unknown' | 'refused') {
    return this.turn((state) => {
      const entry = state.writes[write];
      if (entry?.value.outcome !== 'in-flight' || entry.value.owner !== id) return;
      const { before } = entry.value;
      if (outcome === 'refused') {
        if (before) entry.value = before;
        else delete state.writes[write];
        return;
      }
      entry.value = { at: entry.value.at, outcome };
      entry.expiresAt = this.now() + WRITE_MEMORY_MS;
    });
  }

  async lastSentWrite(write: string, now: number) {
    ownDirectory(this.dir);
    const held = sentWrite(readState(this.dir), write, now);
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
    fs.mkdirSync(dirname(this.auditFile), { recursive: true, mode: 0o700 });
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

  /** One turn with the state: under the lock, read, change, written back by rename. Nothing is awaited inside. */
  private async turn<T>(change: (state: GuardState) => T): Promise<T> {
    ownDirectory(this.dir);
    const release = await lock(join(this.dir, 'state.lock'));
    try {
      const state = readState(this.dir);
      const result = change(state);
      writeState(this.dir, prune(state, this.now()));
      return result;
    } finally {
      release();
    }
  }
}

/**
 * Appends the entry's line to the audit file and answers the new head. The chain continues from
 * the file's own last line when that line is intact and further on than the state's head (state.json
 * lost or reset, or a process that died between the append and the state's write); otherwise from
 * the state's head, so lines cut from the file's end still show in verify.
 */
function appendChained(file: string, secret: Buffer, recorded: AuditHead | undefined, entry: AuditEntry): AuditHead {
  fs.mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
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
  const temporary = join(dir, `${STATE_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  // Created exclusively: a file or link already at that name is never written through.
  const fd = openOwnFile(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL);
  try {
    fs.writeSync(fd, JSON.stringify(state));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, join(dir, STATE_FILE));
}

/** A write's last attempt; one in flight whose process stopped renewing it (it stopped with the write out) is unknown. */
function sentWrite(state: GuardState, write: string, now: number) {
  const held = live(state.writes[write], now);
  if (held?.outcome === 'in-flight' && now - (held.alive ?? held.at) >= WRITE_MARK_LEASE_MS) return { ...held, outcome: 'unknown' as const };
  return held;
}

function live<T>(entry: Expiring<T> | undefined, now: number): T | undefined {
  return entry && entry.expiresAt > now ? entry.value : undefined;
}

function prune(state: GuardState, now: number): GuardState {
  for (const map of [state.counters, state.records, state.writes] as Array<Record<string, Expiring<unknown>>>)
    for (const [name, entry] of Object.entries(map)) if (entry.expiresAt <= now) delete map[name];
  return state;
}

/** Takes the lock file (created exclusively), waiting for another process's turn; a lock left by a dead process is broken. */
async function lock(path: string): Promise<() => void> {
  const mine = `${process.pid} ${randomBytes(6).toString('hex')}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let wait = 2; ; wait = Math.min(wait * 2, 25)) {
    try {
      fs.writeFileSync(path, mine, { flag: 'wx', mode: 0o600 });
      return () => releaseLock(path, mine);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    breakIfStale(path);
    if (Date.now() > deadline) throw new Error(`the guardrails' state is locked by another process (${path}); try again`);
    await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
  }
}

function releaseLock(path: string, mine: string): void {
  try {
    if (fs.readFileSync(path, 'utf8') === mine) fs.unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

/** A lock whose process is gone, or that is far older than any turn, is moved aside (one process wins the rename) and removed. */
function breakIfStale(path: string): void {
  let holder: string;
  let age: number;
  try {
    holder = fs.readFileSync(path, 'utf8');
    age = Date.now() - fs.statSync(path).mtimeMs;
  } catch {
    return;
  }
  const pid = Number(holder.split(' ')[0]);
  if (age < LOCK_STALE_MS && (holder === '' || isAlive(pid))) return;
  const aside = `${path}.stale-${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(path, aside);
    // Another process may have broken it and taken a fresh lock in between: that one goes back.
    if (fs.readFileSync(aside, 'utf8') !== holder) fs.linkSync(aside, path);
    fs.unlinkSync(aside);
  } catch {
    // Lost the race to another process breaking it: fine.
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
