// The file store's files are trusted only when nobody else could have put them there: the state
// directory is made 0700 and, when it already exists, used only if it is ours and nobody else may
// write in it; files are opened without following a symbolic link, so a link planted at their
// path (pointing at ~/.bashrc, say) is refused instead of written through.
import * as fs from 'node:fs';
import { GuardStateError } from './guard-store.js';
import { makeDirectories } from './make-directories.js';

// Windows has no O_NOFOLLOW (nor modes or uids to check): there the checks below do nothing.
const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;
const WRITABLE_BY_OTHERS = 0o022;

/** The state directory, created 0700 if it is missing; refused if another user owns it or others may write in it. */
export function ownDirectory(dir: string): void {
  try {
    makeDirectories(dir);
  } catch (error) {
    // A file where the directory (or one of its folders, records/ say) should be: said below, not an internal error.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw error;
  }
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error;
    throw new GuardStateError(`the state directory ${dir} cannot be made: a file stands in its path. Set ENGAGE_STATE_DIR to a directory of your own`);
  }
  if (!stat.isDirectory())
    throw new GuardStateError(
      `the state directory ${dir} is not a directory. Move it aside (${moveAsideCommand(dir)}), or set ENGAGE_STATE_DIR to a directory of your own`,
    );
  refuseShared(stat, dir, 'the state directory', `chmod 700 ${forShell(dir)}`, 'ENGAGE_STATE_DIR to a directory');
}

/** Opens `path` (created 0600 with O_CREAT), refusing a symbolic link in its place. */
export function openOwnFile(path: string, flags: number): number {
  try {
    return fs.openSync(path, flags | NO_FOLLOW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK')
      throw new GuardStateError(
        `${path} is a symbolic link, and the guardrails' state is never read or written through one. Remove the link (${removeCommand(path)})`,
      );
    throw error;
  }
}

/**
 * `path` opened for reading without following a link or waiting on a FIFO, with its stat; undefined
 * if there is no such file. Anything but a regular file is refused with `notRegular()`. The caller closes it.
 */
export function openRegularFile(path: string, notRegular: () => string): { fd: number; stat: fs.Stats } | undefined {
  let fd: number;
  try {
    fd = openOwnFile(path, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const stat = fs.fstatSync(fd);
  if (stat.isFile()) return { fd, stat };
  fs.closeSync(fd);
  throw new GuardStateError(notRegular());
}

/** No state file the servers write comes near this; a larger one is not read (it would only take the memory). */
const READ_LIMIT = 64 * 1024 * 1024;

/**
 * The whole text of `path`, read without following a link or waiting on a FIFO; undefined if there
 * is no such file. Anything but a regular file of ours that others cannot write, of a size the
 * servers write, is refused, naming it.
 */
export function readOwnFile(path: string): string | undefined {
  const opened = openRegularFile(
    path,
    () => `the guardrails' state file ${path} is not a regular file, so it is not one the servers wrote. Move it aside (${moveAsideCommand(path)})`,
  );
  if (!opened) return undefined;
  const { fd, stat } = opened;
  try {
    refuseShared(stat, path, "the guardrails' state file", `chmod 600 ${forShell(path)}`, 'ENGAGE_STATE_DIR to a directory');
    if (stat.size > READ_LIMIT)
      throw new GuardStateError(
        `the guardrails' state file ${path} is far larger (${stat.size} bytes) than any the servers write, so it is not read. Move it aside (${moveAsideCommand(path)})`,
      );
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The audit record opened for appending (and reading its last line): a regular file of ours that others cannot write. */
export function openAuditFile(path: string): number {
  const fd = openOwnFile(path, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new GuardStateError(`the audit record ${path} is not a regular file. Set ENGAGE_AUDIT_LOG to a file of your own`);
    refuseShared(stat, path, 'the audit record', `chmod 600 ${forShell(path)}`, 'ENGAGE_AUDIT_LOG to a file');
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

function refuseShared(stat: fs.Stats, path: string, what: string, tighten: string, setting: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  if (stat.uid !== uid) throw new GuardStateError(`${what} ${path} belongs to another user (uid ${stat.uid}), who could change it. Set ${setting} of your own`);
  if (stat.mode & WRITABLE_BY_OTHERS) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    throw new GuardStateError(
      `${what} ${path} can be written by others (mode ${mode}), who could change the send counters or the audit record. Run: ${tighten}`,
    );
  }
}

/**
 * `path` as one word of a POSIX shell command the user can copy: as it is when it holds nothing the
 * shell reads (the usual case), else in single quotes, where nothing is special ($, `, spaces,
 * newlines); a single quote in it is closed, escaped and reopened. A leading `-` is kept from
 * reading as an option (`./-x`, never needed for the absolute paths the store uses).
 */
export function forShell(path: string): string {
  const word = path.startsWith('-') ? `./${path}` : path;
  return /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `path` as a PowerShell word: in single quotes, where only a single quote is special (doubled). */
function forPowerShell(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}

/** The command that moves a damaged file aside, for the user's shell (Windows: PowerShell). */
export function moveAsideCommand(path: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return `Move-Item -LiteralPath ${forPowerShell(path)} ${forPowerShell(`${path}.damaged`)}`;
  return `mv ${forShell(path)} ${forShell(`${path}.damaged`)}`;
}

/** The command that removes a file (a planted link, a left lock), for the user's shell (Windows: PowerShell). */
export function removeCommand(path: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return `Remove-Item -LiteralPath ${forPowerShell(path)}`;
  return `rm ${forShell(path)}`;
}
