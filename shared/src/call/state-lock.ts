// The state directory's lock: one turn at a time for every process sharing the directory. The lock
// appears with its owner already in it (written beside, then linked into place); one whose owner is
// gone, or that nobody owns, is broken (by one breaker at a time: `<lock>.break`), and a live owner's never is.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { GuardStateError } from './guard-store.js';
import { openOwnFile, openRegularFile, removeCommand } from './own-files.js';
import { liveness, ownerOf, ownStartAndPlace } from './process-place.js';
import { notSaved, removeQuietly, writeWhole, writtenBeside } from './state-files.js';

const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a process that died holding it (a turn takes milliseconds). */
export const LOCK_STALE_MS = 30_000;

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
 * host's, broken only once it is 30 s old. Breakers take turns of their own (enterBreak), so a
 * stale lock is read again and moved aside by one process at a time.
 */
export async function lock(path: string): Promise<() => void> {
  const mine = `${process.pid} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  const ownerless = new Map<string, number>();
  for (let wait = 2; ; wait = Math.min(wait * 2, 25)) {
    if (takeLock(path, mine)) return () => releaseLock(path, mine);
    breakIfStale(path, ownerless, mine);
    if (Date.now() > deadline) throw lockedBy(path);
    await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
  }
}

/**
 * True if the lock is now `mine`; false if another's is there. A disk that takes no file refuses the
 * turn (notSaved). Its temporary file is written beside `beside` (the lock itself, where the sweep of
 * files a crash left looks).
 */
function takeLock(path: string, mine: string, beside = path): boolean {
  const temporary = writtenBeside(beside, mine, { sync: false });
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
export function readLock(path: string): { holder: string; id: string; mtimeMs: number } | undefined {
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
 * this process saw it), or that is far older than any turn, is removed: by one breaker at a time
 * (enterBreak), which reads it again and moves it aside. Without that, two breakers of one stale
 * lock overlapped: the later one, paused between its read and its move, moved aside the lock a third
 * process had taken since, and while it put it back a fourth took the empty path (two turns at once).
 */
function breakIfStale(path: string, ownerless: Map<string, number>, mine: string): void {
  const lock = readQuietly(path);
  if (!lock || !isStale(lock, ownerless)) return;
  const leave = enterBreak(path, ownerless, mine);
  if (!leave) return;
  try {
    removeStale(path, lock);
  } finally {
    leave();
  }
}

/** The lock at `path` as readLock reads it; undefined if there is none or it cannot be read now. A lock the servers never make is refused. */
function readQuietly(path: string): ReturnType<typeof readLock> {
  try {
    return readLock(path);
  } catch (error) {
    if (error instanceof GuardStateError) throw error;
    return undefined;
  }
}

/**
 * Whether a lock (or a breaker's entry) was left by a process that is gone, nobody's, or far older
 * than any turn. `ownerless` keeps when this process first saw each ownerless one, by the monotonic
 * clock: the system clock going back makes no lock older or younger.
 */
function isStale(lock: NonNullable<ReturnType<typeof readLock>>, ownerless: Map<string, number>): boolean {
  const owner = ownerOf(lock.holder);
  const age = Date.now() - lock.mtimeMs;
  const stale = age >= LOCK_STALE_MS;
  if (!owner) {
    const seen = ownerless.get(lock.id) ?? performance.now();
    ownerless.set(lock.id, seen);
    return stale || performance.now() - seen >= LOCK_OWNERLESS_MS;
  }
  // Another host's process is not this host's to look up: only its lock's age says it stopped.
  // A lock of this host's earlier boot (left by a crash before a reboot) is its process's, gone with that boot.
  const alive = owner.earlierBoot ? 'dead' : owner.here ? liveness(owner.pid, owner.start) : 'unknown';
  // Its owner itself, alive on this host, holds it however old it looks (a clock set forward since, a turn slowed by its disk): never broken.
  if (alive === 'owner') return false;
  // On Linux an owner named without its place may be of another pid namespace with this host's name
  // (a container that cannot read its boot id): its pid not being alive here says nothing; its age does.
  const placeless = owner.place === undefined && process.platform === 'linux';
  return stale || (alive === 'dead' && (owner.earlierBoot || !placeless));
}

/**
 * The breakers' turn, one at a time: each puts an entry (a new name, with its owner already in it)
 * in the folder `<lock>.break` and goes on only if it finds no other entry there; otherwise it takes
 * its entry back and tries again on its next wait (two at once may both step back; neither goes on).
 * An entry another breaker left is removed by its own name once it is stale as a lock is (its
 * process gone, at once): a name is never given again, so only that entry is removed, and a breaker
 * killed in its turn holds up none after it. Returns how to leave the turn, or undefined.
 */
function enterBreak(path: string, ownerless: Map<string, number>, mine: string): (() => void) | undefined {
  const folder = `${path}.break`;
  const entry = join(folder, randomBytes(8).toString('hex'));
  try {
    fs.mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw notSaved(path, error);
    if (!fs.lstatSync(folder).isDirectory())
      throw new GuardStateError(`${folder} is not a folder the servers made, so no stale lock can be broken. Remove it (${removeCommand(folder)})`);
  }
  if (!takeLock(entry, mine, path)) return undefined;
  let alone = true;
  try {
    for (const name of fs.readdirSync(folder)) {
      const other = join(folder, name);
      if (other === entry) continue;
      alone = false;
      const left = readQuietly(other);
      if (left && isStale(left, ownerless) && stillThere(other, left)) removeQuietly(other);
    }
  } catch (error) {
    alone = false;
    throw error;
  } finally {
    // Left in place, a live process's entry would hold every breaker back for as long as it lives.
    if (!alone) removeQuietly(entry);
  }
  return alone ? () => removeQuietly(entry) : undefined;
}

/**
 * Moves the stale lock aside (after reading it once more, with as little as can be between the read
 * and the move) and removes it. Breakers take turns, so between those two steps nothing but the
 * lock's own owner can change it, and a stale lock's owner is gone; one judged stale by its age
 * alone may be released meanwhile and another taken: that one is put back.
 */
function removeStale(path: string, lock: NonNullable<ReturnType<typeof readLock>>): void {
  // Named first: the read just before the move, and the move, with as little as can be between them.
  const aside = `${path}.stale-${randomBytes(4).toString('hex')}`;
  if (!stillThere(path, lock)) return;
  try {
    fs.renameSync(path, aside);
  } catch {
    return; // Gone already (its owner released it, or a breaker of an earlier version broke it): fine.
  }
  try {
    // A lock taken meanwhile goes back. Its file may have the stale one's inode (a file system gives
    // a freed inode to the next file made, ext4 at once), so the owner says which.
    if (!stillThere(aside, lock)) fs.linkSync(aside, path);
  } catch {
    // A lock taken meanwhile at the path: this one's owner finds its lock gone when it releases.
  } finally {
    removeQuietly(aside);
  }
}

/**
 * Whether `path` holds the lock read before: the same file and the same owner (each lock names its
 * own nonce). Read again just before it is moved, since looking its owner up took a while.
 */
function stillThere(path: string, lock: NonNullable<ReturnType<typeof readLock>>): boolean {
  try {
    const now = readLock(path);
    return now?.id === lock.id && now.holder === lock.holder;
  } catch {
    return false;
  }
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
  const breaker = stuckBreaker(path, owner);
  const wait = (held: string) => `${LOCK_WAIT_MS / 1000} s; try again in a moment. If it stays ${held}, that process is stuck: stop it`;
  if (breaker)
    return new GuardStateError(
      `the guardrails' state is locked by ${describeOwner(owner)} (${path}), which is gone, and ${describeOwner(breaker)} has been breaking that lock (its entry in ${path}.break) and was still at it after ${wait('so')}`,
    );
  return new GuardStateError(`the guardrails' state is locked by ${describeOwner(owner)} (${path}), and was still locked after ${wait('locked')}`);
}

function describeOwner(owner: ReturnType<typeof ownerOf>): string {
  if (!owner) return 'another process';
  if (owner.here) return `process ${owner.pid} of this host`;
  if (owner.host === hostname()) return `a process (${owner.pid}) in another pid namespace of this host (a container sharing this state directory)`;
  return `a process (${owner.pid}) of the host ${owner.host}, which shares this state directory`;
}

/**
 * The breaker whose entry holds the others back from a lock of a process that is gone (a breaker
 * stopped in its turn: its entry is never removed while it lives), so that the refusal names the
 * process to stop rather than the one that is gone.
 */
function stuckBreaker(path: string, owner: ReturnType<typeof ownerOf>): ReturnType<typeof ownerOf> {
  if (!owner || !(owner.earlierBoot || (owner.here && liveness(owner.pid, owner.start) === 'dead'))) return undefined;
  try {
    for (const name of fs.readdirSync(`${path}.break`)) {
      const breaker = ownerOf(readLock(join(`${path}.break`, name))?.holder ?? '');
      if (breaker) return breaker;
    }
  } catch {
    // No entry that can be read: the lock's owner is named alone.
  }
  return undefined;
}
