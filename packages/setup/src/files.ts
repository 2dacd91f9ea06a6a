// Reading a host's config file and replacing it safely: one run at a time (a lock file beside
// it), a backup of what was there, then the new text written beside it, synced and renamed over it,
// and the folder synced, so a crash never leaves half a file nor brings back the old one. A file
// holding the key, and every backup, is its owner's only. Run by root in another user's home
// (sudo keeping HOME), what it makes stays that user's, or their host could not read its config,
// and no link that user made to a file not theirs is followed. The host takes no lock: a save it
// makes while setup writes is merged, not lost, a half-done save read again. What a run ended
// mid-write left is removed. A file with other names (hard links), or a link to no file, is replaced
// under the config's name only, and the caller is told (Written).
import { realpathSync, type Stats, statSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, open, readdir, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';
import { ConfigRefused } from './config-error.js';
import { readRegular } from './regular-file.js';
import { shellWord } from './shown.js';

/** The file's text, or undefined when there is none yet. Refuses what it could not write back as it was. */
export async function readConfig(path: string): Promise<string | undefined> {
  await refuseForeignLinks(path);
  let bytes: Buffer;
  try {
    bytes = await readRegular(path);
  } catch (error) {
    if (error instanceof ConfigRefused) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR')
      throw new ConfigRefused(
        `${path} is a folder, where a config file was expected; nothing was changed. Move the folder aside if it stands where the host's file goes, or name a file with --config-path.`,
      );
    const advice = code !== undefined && ACCESS_REFUSED.has(code) ? `: ${accessAdvice(path)}, then run again` : '';
    throw new ConfigRefused(`${path} cannot be read (${code ?? (error as Error).message})${advice}. Nothing was changed.`);
  }
  await refuseReadOnly(path);
  return decodeUtf8(bytes, path);
}

/**
 * Run as root (in another user's home), a symbolic link on the way to the config that a user made
 * to something not theirs is not followed: the user could point it at any file (/etc/…), and root
 * would rewrite it, its mode made 0600. The rule of the kernel's protected_symlinks, on every link
 * the path is resolved through, the links a link leads to as well (a link root made, by a
 * provisioning script say, may lead to a user's). Followed when root made it or its maker owns
 * where it leads. Not for other runs: there the system's permissions already keep a person to
 * their own files.
 */
async function refuseForeignLinks(path: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  // Not resolve(): it takes a `..` lexically, where the system takes it after the link before it.
  const pending = (isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`).split(sep);
  let at = parse(resolve(path)).root;
  for (let links = 0; pending.length > 0; ) {
    const part = pending.shift() as string;
    if (part === '' || part === '.') continue;
    const next = part === '..' ? dirname(at) : join(at, part);
    const link = await lstat(next).catch(() => undefined);
    // Nothing there: a new file replaces a link to nothing itself, and no folder is made through one.
    if (link === undefined || links > MAX_LINKS) return;
    if (!link.isSymbolicLink()) {
      at = next;
      continue;
    }
    links++;
    await refuseForeignLink(path, next, link);
    const to = await readlink(next);
    if (isAbsolute(to)) at = parse(to).root;
    pending.unshift(...to.split(sep));
  }
}

/** Links the system follows on one path before it gives up (ELOOP): reading the file then fails on its own. */
const MAX_LINKS = 40;

/** Refuses the link at `at`, met resolving `path`, when a user made it to something not theirs. */
async function refuseForeignLink(path: string, at: string, link: Stats): Promise<void> {
  if (link.uid === 0) return;
  const target = await stat(at).catch(() => undefined);
  if (target === undefined || target.uid === link.uid) return;
  const which = at === resolve(path) ? 'is' : `leads through ${at},`;
  throw new ConfigRefused(
    `${path} ${which} a symbolic link of user ${link.uid} to ${await realpath(at)}, which is user ${target.uid}'s; ` +
      'run as root, setup does not follow it, as its maker could point it at any file. Nothing was changed. ' +
      'Run setup as the user whose home this is (sudo -u that user), or replace the link with what it points to.',
  );
}

/** Decoding another encoding as UTF-8 would replace its bytes for good when the file is written back. */
function decodeUtf8(bytes: Buffer, path: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    const line = bytes.subarray(0, utf8PrefixLength(bytes)).filter((byte) => byte === 0x0a).length + 1;
    throw new ConfigRefused(
      `${path} is not valid UTF-8 (a byte on line ${line} is in another encoding, Latin-1 say); nothing was changed, ` +
        'as rewriting it would change those bytes. Save it as UTF-8, or add the servers by hand: run again with --print for the snippet.',
    );
  }
}

/**
 * How many bytes from the start are UTF-8 (a sequence cut short at the end counts), so the next is
 * the first that is not. Not where a lenient decoding first holds U+FFFD: the file may hold that
 * character itself. A binary search: a prefix of a good prefix is good.
 */
function utf8PrefixLength(bytes: Buffer): number {
  let good = 0;
  let bad = bytes.length + 1;
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, middle), { stream: true });
      good = middle;
    } catch {
      bad = middle;
    }
  }
  return good;
}

/** Root may write anything, so the mode bits say whether the person meant the file to stay as it is. */
async function refuseReadOnly(path: string): Promise<void> {
  const { mode, uid } = await stat(path);
  if ((mode & 0o200) !== 0) return;
  const real = await realpath(path);
  // A link to a read-only file: another tool made it and writes it (home-manager's into /nix/store, a dotfiles manager's).
  // So is a folder link (home-manager linking ~/.config/Code/User whole) where the file is not this user's to make writable.
  const throughFolderLink = real !== resolve(path) && uid !== process.getuid?.();
  if ((await lstat(path)).isSymbolicLink() || throughFolderLink) {
    throw new ConfigRefused(
      `${path} ${throughFolderLink ? 'leads through a link' : 'is a link'} to ${real}, which is read-only: the tool that made the link keeps that file (home-manager, a dotfiles manager), ` +
        'and would undo a change made here; nothing was changed. Add the servers where that tool takes its settings (--print shows them).',
    );
  }
  // Only its owner may make it writable: root's, say, copied in with sudo.
  const makeWritable =
    uid === process.getuid?.() || process.getuid?.() === 0
      ? 'Make it writable (chmod u+w)'
      : `It is not yours to make writable: ${accessAdvice(path)}; then make it writable (chmod u+w)`;
  throw new ConfigRefused(
    `${path} is read-only, so it was not replaced; nothing was changed. ${makeWritable} and run again, or add the servers by hand with --print.`,
  );
}

/**
 * Makes the file its owner's only (0600) if others may read or write it: the mode it had, as octal
 * text, or undefined where it was so already.
 */
export async function keepToOwner(path: string): Promise<string | undefined> {
  // Windows keeps no such bits: a file's mode reads 0666 whatever its access list says.
  if (process.platform === 'win32') return undefined;
  const target = await realpath(path);
  const { mode } = await stat(target);
  if ((mode & 0o077) === 0) return undefined;
  const was = `0${(mode & 0o777).toString(8)}`;
  await chmod(target, 0o600).catch((error: NodeJS.ErrnoException) => {
    // Another user's file (root's, copied in with sudo): only its owner may change its mode.
    if (!ACCESS_REFUSED.has(error.code ?? '')) throw error;
    throw new ConfigRefused(
      `${path} holds the key and is readable by others (mode ${was}), and could not be made yours only (${error.code}): ` +
        `${accessAdvice(target)}, then run again. Its entries were as given already; nothing else was changed.`,
    );
  });
  return was;
}

export interface Written {
  /** The file written: a symlinked config is written where the link points, keeping the link. */
  path: string;
  backup?: string;
  /**
   * How many other names (hard links) the replaced file had: the new file takes this name only,
   * and they keep the old text (a dotfiles folder hard-linked in no longer follows it).
   */
  otherNames?: number;
  /** Where the config, a symbolic link to no file, led: the new file replaced the link, and nothing was made there. */
  replacedLinkTo?: string;
  /** How many older backups of setup's beside the file were removed, past the newest KEPT_BACKUPS. */
  removedBackups?: number;
}

/** The file was changed by someone else (its host saving it) while setup wrote its own text. */
class ChangedMeanwhile extends Error {}

/** How many times a merge is made again from the file as it is, when it changed while being written. */
const MERGE_ATTEMPTS = 3;

/** How long to let the host finish a save before the file is read again, longer each time. */
const SAVE_SETTLE_MS = 100;

/**
 * Merges into the file as it is now (another run or the host may have changed it since it was read
 * for the question) and writes the result, under the file's lock. The host does not take the lock,
 * so the file is read again just before the new one takes its place, and the merge is made again
 * from it if it changed: the host's own save is not lost. Read again, a file that cannot be merged
 * (no longer JSON, cut mid-character) is most likely a save half done (a host without an atomic
 * rename truncates, then writes): it is read again after a moment. Undefined: nothing to change.
 * `holdsKey`: the entries carry the live key, so the file becomes its owner's only (whether the
 * file's text shows the key is no test: JSON and TOML escape a quote or a backslash in it).
 */
export async function mergeIntoConfig(path: string, merge: (current: string | undefined) => string, holdsKey: boolean): Promise<Written | undefined> {
  return withConfigLock(path, async () => {
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) await new Promise((wake) => setTimeout(wake, SAVE_SETTLE_MS * (attempt - 1)));
      let current: string | undefined;
      let text: string;
      try {
        current = await readConfig(path);
        text = merge(current);
      } catch (error) {
        // Setup merged the file once already, for the question: a refusal now is a change since, maybe half saved.
        if (attempt === MERGE_ATTEMPTS || !(error instanceof ConfigRefused)) throw error;
        continue;
      }
      if (text === current) return undefined;
      try {
        return await replaceConfig(path, text, current !== undefined, holdsKey, new Date(), { text: current });
      } catch (error) {
        if (!(error instanceof ChangedMeanwhile)) throw error;
        if (attempt === MERGE_ATTEMPTS)
          throw new ConfigRefused(
            `${path} changed each time setup was about to replace it (the host saving it, say); nothing was changed. Quit the host, then run again.`,
          );
      }
    }
  });
}

/**
 * Replaces the file with `text`. `holdsKey`: the text has the live key, so the file becomes
 * readable by its owner only; otherwise an existing file keeps its mode. `mergedFrom`: the file's
 * text the new one was made from (undefined: there was none); if the file holds anything else by
 * the time it would be replaced, nothing is written and ChangedMeanwhile is thrown.
 */
export async function replaceConfig(
  path: string,
  text: string,
  existed: boolean,
  holdsKey: boolean,
  now = new Date(),
  mergedFrom?: { text: string | undefined },
): Promise<Written> {
  await refuseForeignLinks(path);
  const target = existed ? await realpath(path) : path;
  await makeFolder(dirname(target));
  if (existed) await refuseReadOnly(target);
  const replaced = existed ? await stat(target) : undefined;
  // A link to no file: the rename replaces the link itself (root must not make a file where a user's link leads).
  const dangling = existed ? undefined : await readlink(target).catch(() => undefined);
  const mode = holdsKey || !replaced ? 0o600 : replaced.mode & 0o777;
  // The replaced file's owner, or the folder's for a new one.
  const owner = await ownerFor(existed ? target : dirname(target));
  const temporary = `${target}.engage-setup-${process.pid}-${Date.now()}.tmp`;
  let backup: string | undefined;
  try {
    await writeNew(temporary, text, mode, owner);
    if (existed) backup = await backupOf(target, now, owner);
    if (mergedFrom && (await textOf(target)) !== mergedFrom.text) throw new ChangedMeanwhile();
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    if (backup) await rm(backup, { force: true });
    throw cannotWrite(path, error);
  }
  // After the rename, so the backup stays whatever this says: the new file is in place by now.
  await syncFolder(dirname(target)).catch((error: NodeJS.ErrnoException) => {
    throw new ConfigRefused(
      `${target} was written${backup ? ` (the previous file is kept as ${backup})` : ''}, but its folder could not be synced to disk ` +
        `(${error.code ?? error.message}), so a crash now could undo it: check the disk, and the file after a restart.`,
    );
  });
  const otherNames = replaced && replaced.nlink > 1 ? replaced.nlink - 1 : undefined;
  const replacedLinkTo = dangling ? { replacedLinkTo: dangling } : {};
  // Only once the new file and its backup are in place: an older backup is then no longer the last copy.
  const removedBackups = backup && replaced ? await removeOldBackups(target, replaced.uid) : 0;
  return {
    path: target,
    ...(backup ? { backup } : {}),
    ...(otherNames ? { otherNames } : {}),
    ...replacedLinkTo,
    ...(removedBackups > 0 ? { removedBackups } : {}),
  };
}

/** The file's text as it is now, undefined for none (compared only: read leniently). */
async function textOf(path: string): Promise<string | undefined> {
  try {
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(await readRegular(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Codes of a platform that cannot sync a folder (Windows, some filesystems): the rename stands as it is. */
const FOLDER_SYNC_REFUSED = new Set(['EINVAL', 'EISDIR', 'EPERM', 'EACCES', 'ENOTSUP']);

/** A rename is in the folder, not the file: until the folder is synced, a crash may undo it. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (!FOLDER_SYNC_REFUSED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}

interface Owner {
  uid: number;
  gid: number;
}

/**
 * Whom a file or folder made at `existing` (or below it) is to belong to: when root writes into a
 * place another user owns, that user, as if they had run setup; undefined for everyone else
 * (what they make is theirs anyway) and on Windows.
 */
async function ownerFor(existing: string): Promise<Owner | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { uid, gid } = await stat(existing);
  return uid === 0 && gid === 0 ? undefined : { uid, gid };
}

/** The folder, made if need be; as root, each folder made is given the owner of the folder it was made in. */
async function makeFolder(folder: string): Promise<void> {
  const wanted = resolve(folder);
  let existing = wanted;
  while (dirname(existing) !== existing && !(await exists(existing))) existing = dirname(existing);
  const owner = await ownerFor(existing).catch(() => undefined);
  const first = await makeLevels(wanted, existing);
  if (first === undefined || owner === undefined) return;
  for (let made = wanted; ; made = dirname(made)) {
    // lchown: the user owns the folder these were made in, and could swap one for a link to /etc
    // before this line; chown would follow it and give them what it points to.
    await lchown(made, owner.uid, owner.gid);
    if (made === resolve(first) || dirname(made) === made) return;
  }
}

/**
 * The folders from below `existing` down to `wanted`, one level at a time: the first one made.
 * Node's recursive mkdir never ends where mkdir answers ENOENT below a folder that exists (a path
 * under /proc); here that ENOENT is thrown, as any other failure.
 */
async function makeLevels(wanted: string, existing: string): Promise<string | undefined> {
  const missing: string[] = [];
  for (let at = wanted; at !== existing && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const folder of missing)
    await mkdir(folder).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  return missing[0];
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * A file that did not exist, with this mode from its first byte (the umask cannot widen it), and this
 * owner if given. One made but not filled (the disk full) is removed: left, an empty lock would
 * hold off the next run, and an empty backup would stand for the file.
 */
async function writeNew(path: string, content: string | Buffer, mode: number, owner?: Owner): Promise<void> {
  const handle = await open(path, 'wx', mode);
  try {
    if (owner) await handle.chown(owner.uid, owner.gid);
    await handle.chmod(mode);
    await handle.writeFile(content);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(path, { force: true });
    throw error;
  }
  await handle.close();
}

/** What the person can do about a file system's refusal to write, by its code. */
const WRITE_REFUSALS: Record<string, string> = {
  ENOSPC: 'its disk is full: free some space on it',
  EDQUOT: 'your disk quota is used up: free some space',
  EFBIG: 'a file there would be larger than this process may write (ulimit -f): raise that limit',
  EROFS: 'its file system is mounted read-only',
};

/** Refusals of access: what to do depends on whose the file or folder is. */
const ACCESS_REFUSED = new Set(['EACCES', 'EPERM']);

/**
 * What to do about a file or folder this user may not read or write. Often it was made by a run
 * with sudo, and so is root's, in the person's own home: then it is to be taken back, not made
 * writable, which they cannot do. Taking back is offered only inside a home of theirs: anywhere
 * else (the home itself when HOME is another's, / in a container, a disk mounted there) a chown,
 * -R above all, would take what was never theirs.
 */
function accessAdvice(at: string): string {
  // Windows: no owner ids to compare, and access lists are not chmod's; a program holding it open is the usual cause.
  if (process.platform === 'win32') return `close any program that has ${at} open, and check that your account may change it`;
  let found: Stats;
  try {
    found = statSync(at);
  } catch {
    // Not to be looked at (a folder above it closed to this user), or not there: it is the folder that is refused.
    const folder = dirname(at);
    return folder === at ? `run as the user ${at} belongs to` : accessAdvice(folder);
  }
  const word = shellWord(at);
  if (found.uid === process.getuid?.()) {
    const chmodMode = found.isDirectory() ? 'u+rwx' : 'u+rw';
    return `make ${at} readable and writable for you${word ? ` (chmod ${chmodMode} ${word})` : ` (chmod ${chmodMode})`}`;
  }
  if (!insideOwnHome(at, found))
    return (
      `${at} belongs to another user (uid ${found.uid}), and is not inside a home folder of yours: ` +
      'if HOME is not your own home, set it to yours; else run as that user, or name a file you may write with --config-path'
    );
  const command = `sudo chown ${found.isDirectory() ? '-R ' : ''}"$(id -un)"`;
  return (
    `${at} belongs to another user (uid ${found.uid}); if it is yours, made another's by a run with sudo, ` +
    `take it back (${word ? `${command} ${word}` : `${command} on it: its name holds a character no command here could show`})`
  );
}

/**
 * Whether `at` is below the home folder (HOME), where it really is too (chown follows a link to a
 * file: ~/.cursor/mcp.json a link to /etc/…, it would give that file away), that home is this
 * user's, and `at` is on its disk.
 */
function insideOwnHome(at: string, found: Stats): boolean {
  const below = (folder: string, path: string) => {
    const rest = relative(folder, path);
    return rest !== '' && rest !== '..' && !rest.startsWith(`..${sep}`) && !isAbsolute(rest);
  };
  try {
    const home = resolve(homedir());
    if (!below(home, resolve(at)) || !below(realpathSync(home), realpathSync(at))) return false;
    const homeStats = statSync(home);
    return homeStats.uid === process.getuid?.() && homeStats.dev === found.dev;
  } catch {
    return false;
  }
}

/** A failure to write beside `path` (its lock, the new text, the backup), said as what happened and what to do. */
function cannotWrite(path: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === undefined || error instanceof ConfigRefused) return error as Error;
  // The folder the file was to be made in (error.path: the lock, the new text or the backup).
  const folder = dirname((error as NodeJS.ErrnoException).path ?? path);
  const next = ACCESS_REFUSED.has(code) ? `you may not write in its folder: ${accessAdvice(folder)}` : WRITE_REFUSALS[code];
  const what = next ? `(${code}): ${next}, then run again` : `(${(error as Error).message})`;
  return new ConfigRefused(`${path} cannot be written ${what}. Nothing was changed.`);
}

/** `<file>.backup-20250101-120000`, never overwriting an earlier backup; its owner's only, as it may hold keys. */
async function backupOf(path: string, now: Date, owner: Owner | undefined): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const original = await readRegular(path);
  for (let attempt = 1; ; attempt++) {
    const candidate = `${path}.backup-${stamp}${attempt > 1 ? `-${attempt}` : ''}`;
    try {
      await writeNew(candidate, original, 0o600, owner);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** How many of its backups beside a file setup keeps: enough to go back some runs (setup-safety makes six in one burst of seven), not one for every run ever made. */
export const KEPT_BACKUPS = 10;

/** The name backupOf gives: the file's, then its stamp and a count for a second in the same second. */
const BACKUP_NAME = /^\.backup-(\d{8}-\d{6})(?:-(\d+))?$/;

/**
 * Removes setup's backups of `target` past the newest KEPT_BACKUPS, oldest first by the stamp in
 * their names; how many it removed. Only what setup makes counts as one: a regular file of that
 * name with no other name, its owner's only (0600) and the owner of the file it backs up. A link,
 * a file others may read, or any other name is the person's, left as it is. A backup that cannot
 * be removed is left: the file is written already.
 */
async function removeOldBackups(target: string, ownerUid: number): Promise<number> {
  const prefix = basename(target);
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  const ours: { name: string; stamp: string; count: number }[] = [];
  for (const name of names) {
    const match = name.startsWith(prefix) ? BACKUP_NAME.exec(name.slice(prefix.length)) : null;
    if (match === null) continue;
    const found = await lstat(join(dirname(target), name)).catch(() => undefined);
    if (found === undefined || !madeBySetup(found, ownerUid)) continue;
    ours.push({ name, stamp: match[1] as string, count: Number(match[2] ?? 1) });
  }
  ours.sort((a, b) => (a.stamp === b.stamp ? a.count - b.count : a.stamp < b.stamp ? -1 : 1));
  let removed = 0;
  for (const { name } of ours.slice(0, Math.max(0, ours.length - KEPT_BACKUPS)))
    if (
      await rm(join(dirname(target), name)).then(
        () => true,
        () => false,
      )
    )
      removed++;
  return removed;
}

/** A backup as backupOf makes it (Windows keeps no mode or owner: the name and kind alone). */
function madeBySetup(found: Stats, ownerUid: number): boolean {
  if (!found.isFile() || found.nlink !== 1) return false;
  return process.platform === 'win32' || ((found.mode & 0o777) === 0o600 && found.uid === ownerUid);
}

const LOCK_WAIT_MS = 15_000;
/** A lock this old is left over whatever it says: no run holds one for more than a moment. */
const LOCK_STALE_MS = 60_000;
/** A lock whose run has ended counts as left over once it is this old (a run holds one for milliseconds). */
const LOCK_ORPHAN_MS = 5_000;

/**
 * Runs `change` while holding `<file>.engage-setup.lock`, created with O_EXCL, so runs against
 * one file read, merge and write one after another and none loses another's entries.
 */
export async function withConfigLock<T>(path: string, change: () => Promise<T>): Promise<T> {
  await refuseForeignLinks(path);
  const target = await realpath(path).catch(() => resolve(path));
  await makeFolder(dirname(target)).catch((error: unknown) => {
    throw cannotWrite(path, error);
  });
  const lock = `${target}.engage-setup.lock`;
  await acquireLock(lock, path);
  try {
    await removeLeftovers(target);
    return await change();
  } finally {
    await rm(lock, { force: true });
  }
}

/**
 * New texts a run left beside the file, ended before it renamed one into place (Ctrl-C, a crash, a
 * closed terminal): each may hold the key. Runs write them only under the lock, so under it any
 * there is left over. A link of that name is removed, not what it points to.
 */
async function removeLeftovers(target: string): Promise<void> {
  const prefix = `${basename(target)}.engage-setup-`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  const leftovers = names.filter((name) => name.startsWith(prefix) && name.endsWith('.tmp'));
  await Promise.all(leftovers.map((name) => rm(join(dirname(target), name)).catch(() => undefined)));
}

async function acquireLock(lock: string, path: string): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeNew(lock, `${process.pid}\n`, 0o600);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw cannotWrite(path, error);
    }
    if (await removeIfStale(lock)) continue;
    if (Date.now() > deadline) {
      throw new ConfigRefused(
        `${path} is being changed by another engage-mcp-setup (its lock ${lock} is there); nothing was changed. ` +
          'Run again when it has finished, or delete the lock file if no other run is going on.',
      );
    }
    await new Promise((wake) => setTimeout(wake, 20 + Math.random() * 40));
  }
}

/**
 * A lock left over by a run that crashed is removed: its process has ended and it is some seconds
 * old, or it is too old to be held at all. A run that ends normally removes its own lock, so a
 * fresh lock whose process has just ended is not taken for stale (another run may hold the next
 * lock by then), and the lock is checked to be the very file inspected just before it is removed.
 */
async function removeIfStale(lock: string): Promise<boolean> {
  try {
    const [content, seen] = await Promise.all([readRegular(lock).then(String), stat(lock)]);
    const pid = Number(content.trim());
    const age = Date.now() - seen.mtimeMs;
    const ended = Number.isInteger(pid) && pid > 0 && !isRunning(pid);
    if (!(ended && age > LOCK_ORPHAN_MS) && age < LOCK_STALE_MS) return false;
    if ((await stat(lock)).ino !== seen.ino) return true;
    await rm(lock, { force: true });
    return true;
  } catch (error) {
    // Gone between the attempt and the look: try again at once.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
