// The state directory's files written so that a reader sees a whole file or none (written beside,
// synced, then renamed or linked into place), and a write the disk refuses is said as such (what
// failed, and what the user does about it), never as the server's internal error.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname } from 'node:path';
import { GuardStateError } from './guard-store.js';
import { moveAsideCommand, openOwnFile } from './own-files.js';

/**
 * `text` at `path` unless a file is there already: written beside and synced, then linked into
 * place, so it appears whole. A file system without hard links has it created exclusively instead.
 */
export function createWhole(path: string, text: string): void {
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

/**
 * Written to a temporary file, synced, then renamed over `path`: a reader sees the old text or the
 * new, never part of one. A write that fails (a full disk, an I/O error) leaves no temporary file
 * and nothing at `path` changed, and is refused as state that could not be saved (notSaved).
 * `durable`: the folder is synced after the rename too, so a power loss seconds later does not
 * take the file back (an idempotency record or a write's claim, made just before its write was
 * sent: without it, the repeat after the reboot would be sent again).
 */
export function writeAtomically(path: string, text: string, { durable = false }: { durable?: boolean } = {}): void {
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
export function writtenBeside(path: string, text: string, { sync }: { sync: boolean }): string {
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
export function writeWhole(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at, bytes.length - at);
}

/** An entry's file removed (its key forgotten, its attempt given back); one that cannot be is refused like a write that could not be saved. */
export function removeEntry(path: string): void {
  try {
    fs.rmSync(path, { force: true });
  } catch (error) {
    throw notSaved(path, error);
  }
}

export function removeQuietly(path: string): void {
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
export function usable(path: string, work: () => void): void {
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
export function notSaved(path: string, error: unknown): Error {
  if (error instanceof GuardStateError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const why = (code && NOT_SAVED_BECAUSE[code]) ?? (error instanceof Error ? error.message : String(error));
  return new GuardStateError(
    `the guardrails' state could not be saved in ${dirname(path)} (${why}${code ? `, ${code}` : ''}), so the send caps, idempotency keys and earlier sends cannot be kept. ` +
      `${whatToDo(code)} and ask again`,
  );
}
