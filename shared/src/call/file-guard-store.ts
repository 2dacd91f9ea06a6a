// The guardrails' state for the stdio servers of one machine: a JSON file in the user's state
// directory, read and rewritten under a lock file (created exclusively) and replaced by an atomic
// rename, so the seven server processes (and a restarted one) see one set of counters, one set of
// idempotency records and one audit chain. Every file is the owner's only (0600, directory 0700).
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { chainAuditLine, type AuditEntry, type AuditHead } from './audit.js';
import type { GuardStore, IdempotencyRecord } from './guard-store.js';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

export interface GuardState {
  counters: Record<string, Expiring<number>>;
  records: Record<string, Expiring<IdempotencyRecord>>;
  /** Where the audit chain stands, per audit file: `verify` also notices lines cut from its end. */
  audit: Record<string, AuditHead>;
}

const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a process that died holding it (a turn takes milliseconds). */
const LOCK_STALE_MS = 30_000;

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
    return live(readState(this.dir).counters[counter], this.now()) ?? 0;
  }

  async lookup(key: string) {
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

  async appendAudit(entry: AuditEntry) {
    const secret = await this.auditSecret();
    await this.turn((state) => {
      const { line, head } = chainAuditLine(secret, state.audit[this.auditFile] ?? { seq: 0, mac: '' }, entry);
      fs.mkdirSync(dirname(this.auditFile), { recursive: true, mode: 0o700 });
      fs.appendFileSync(this.auditFile, `${line}\n`, { mode: 0o600 });
      state.audit[this.auditFile] = head;
    });
  }

  /** Created once, exclusively: the first process to write makes it, every later one reads it. */
  async auditSecret() {
    if (this.secret) return this.secret;
    ensureDir(this.dir);
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
    ensureDir(this.dir);
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

function ensureDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

export function readSecret(dir: string): Buffer {
  // The secret may be mid-write by another process for an instant; an empty read is retried by the caller's next call.
  const text = fs.readFileSync(join(dir, SECRET_FILE), 'utf8').trim();
  if (text.length < 40) throw new Error(`${join(dir, SECRET_FILE)} is not a complete audit secret`);
  return Buffer.from(text, 'base64url');
}

export function readState(dir: string): GuardState {
  try {
    const parsed = JSON.parse(fs.readFileSync(join(dir, STATE_FILE), 'utf8')) as Partial<GuardState>;
    return { counters: parsed.counters ?? {}, records: parsed.records ?? {}, audit: parsed.audit ?? {} };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { counters: {}, records: {}, audit: {} };
    throw error;
  }
}

function writeState(dir: string, state: GuardState): void {
  const temporary = join(dir, `${STATE_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`);
  const fd = fs.openSync(temporary, 'w', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(state));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, join(dir, STATE_FILE));
}

function live<T>(entry: Expiring<T> | undefined, now: number): T | undefined {
  return entry && entry.expiresAt > now ? entry.value : undefined;
}

function prune(state: GuardState, now: number): GuardState {
  for (const map of [state.counters, state.records] as Array<Record<string, Expiring<unknown>>>)
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
