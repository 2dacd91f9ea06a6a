// Each server's bin (dist/index.js), bundled by scripts/build.mjs: it runs the server bundle
// (dist/server.cjs) through V8's code cache. A host starts seven servers at every launch, and most
// of a start is compiling the SDK's code and building its schemas; with the cache a start skips
// the compiling of every function the last start ran. Node's own compile cache (22.1 and later)
// caches a module as first compiled, before it runs, and Node 20 has none; this one is written
// after the start (so it holds the functions compiled while starting) and works on every Node this
// project supports. The cache is the user's own (~/.cache, a folder only they may write), keyed by
// the bundle's build id, size and time, the Node version and the platform, so a cache never meets
// code other than its own. V8 checks only a cache's header (and the source's length) and trusts the
// rest, crashing the process on a damaged payload: each cache carries its SHA-256, and one that
// does not match is never given to V8.
// NODE_DISABLE_COMPILE_CACHE=1 (Node's own switch) turns it off. Failures never stop the server.
// While the bundle starts, V8's optimizing compiler (TurboFan) is held back where it would
// optimize during a start (up to V8 12, Node 22; holdOptimizer below).
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { Module, createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { cachedDataVersionTag, setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { makeDirectories } from '../shared/src/call/make-directories.js';
import { endOfStart, onEndOfStart } from '../shared/src/mcp/end-of-start.js';

/**
 * How long after the bundle ran the cache is written, and the optimizing compiler let go: a host
 * sends initialize and tools/list at once.
 */
export const WRITE_AFTER_MS = 1_000;

export interface LaunchOptions {
  /** The bundle (dist/server.cjs). */
  file: string;
  /** Whose bundle it is (the domain), naming its cache files. */
  name: string;
  /** What the build calls this bundle (a hash of it), so a cache never meets other code. */
  buildId: string;
  /** The cache folder; undefined turns the cache off. */
  cacheDir: string | undefined;
  writeAfterMs?: number;
}

export interface Launched {
  /** What became of the cache: used, none (or it could not be read), or refused (damaged, or V8 could not use it). */
  cache: 'used' | 'none' | 'rejected' | 'off';
  /** Resolves once the cache has been written (true) or left alone (false). */
  written: Promise<boolean>;
}

/** The cache folder for this user, or undefined when the cache is off or the folder is not safely theirs. */
export function cacheDirOf(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  // A relative XDG_CACHE_HOME is to be ignored (the XDG spec): it would name a folder of the working
  // directory, which for a server is often a project's, where a cloned repository could plant a
  // cache (V8 runs whatever code a cache holds for a source of the same length).
  const xdg = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
  try {
    // homedir() throws where HOME is unset and the user has no passwd entry (a container run
    // under an arbitrary uid with a cleared environment): no cache then, and the server starts.
    const dir = join(xdg ?? join(homedir(), '.cache'), 'engage-mcp', 'code-cache');
    if (!isAbsolute(dir)) return undefined;
    // (Not Node's recursive mkdir, which never ends for a folder named under /proc.)
    makeDirectories(dir);
    const stat = statSync(dir);
    // Another user's folder, or one others may write to, could hold code planted for us; so could
    // one below a folder another user may write to (the sticky /tmp aside), who could rename ours
    // away and put theirs in its place. (On Windows there are no such mode bits; the folder is in
    // the user's own profile.)
    if (!process.getuid) return dir;
    const uid = process.getuid();
    if (stat.uid !== uid || (stat.mode & 0o022) !== 0) return undefined;
    return ancestorsOf(dir).every((folder) => {
      const { uid: owner, mode } = statSync(folder);
      return (owner === uid || owner === 0) && ((mode & 0o022) === 0 || (mode & 0o1000) !== 0);
    })
      ? dir
      : undefined;
  } catch {
    return undefined;
  }
}

/** The folders above `dir` up to the root, as named and where its links lead. */
function ancestorsOf(dir: string): string[] {
  const folders = new Set<string>();
  for (const start of [dir, realpathSync(dir)]) {
    for (let at = dirname(start); !folders.has(at); at = dirname(at)) folders.add(at);
  }
  return [...folders];
}

/** The oldest Node the packages ask for (their engines field). */
const OLDEST_NODE = [20, 18, 1] as const;

/** A line for a Node older than the packages ask for: a host runs whatever node its PATH finds first. */
export function oldNodeWarning(version: string): string | undefined {
  const parts = version.replace(/^v/, '').split('.').map(Number);
  const older = OLDEST_NODE.findIndex((part, index) => (parts[index] ?? 0) !== part);
  if (older < 0 || (parts[older] ?? 0) > (OLDEST_NODE[older] as number)) return undefined;
  return (
    `this is Node ${version}, and engage-mcp needs Node ${OLDEST_NODE.join('.')} or later (a host runs the first node on the PATH it starts with): ` +
    'install a newer Node; on this one the server may fail.'
  );
}

/** Runs the bundle as CommonJS, from the cache when there is a usable one; writes a cache when there was none. */
export function launch(options: LaunchOptions): Launched {
  const old = oldNodeWarning(process.version);
  if (old) process.stderr.write(`[engage-mcp-${options.name}] warn: ${old}\n`);
  const source = readFileSync(options.file, 'utf8').replace(/^#!.*/, '');
  const cacheFile = options.cacheDir && cacheFileOf(options, statSync(options.file));
  const stored = cacheFile ? readIfThere(cacheFile) : undefined;
  const cachedData = stored && intact(stored);
  // The bundle loads what it needs later with require() (the build turns its import() into that).
  const script = new Script(Module.wrap(source), { filename: options.file, ...(cachedData ? { cachedData } : {}) });
  const module = new Module(options.file);
  module.filename = options.file;
  // After the compile: V8 takes a cache only under the flags it was made with.
  const startFlags = cachedDataVersionTag();
  onEndOfStart(holdOptimizer(startFlags));
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(options.file), module, options.file, dirname(options.file));
  const cache = !cacheFile ? 'off' : !stored ? 'none' : !cachedData || script.cachedDataRejected ? 'rejected' : 'used';
  if (cache === 'used') touch(cacheFile as string);
  const toWrite = cache === 'none' || cache === 'rejected';
  const afterStart = later(options.writeAfterMs ?? WRITE_AFTER_MS, () => {
    // First (if the bundle has not ended it): a cache records the flags it was made under, and the
    // next start's are the defaults.
    endOfStart();
    // And never a cache made under other flags than the start's (no start could use it).
    return toWrite && cachedDataVersionTag() === startFlags && writeCache(script, cacheFile as string);
  });
  return { cache, written: toWrite ? afterStart : Promise.resolve(false) };
}

/**
 * Options by which a user chose V8's tiers themselves (V8 takes `-` or `--`), or with which V8
 * aborts at the hold's flag change: frozen flags, contradictory flags made fatal, and
 * `--always-osr-from-maglev` beside `--no-turbofan` on V8 12.4. The launcher leaves them alone.
 */
const TIER_FLAGS =
  /(^|\s)--?(no[-_]?)?(turbofan|opt|jitless|max[-_]opt|always[-_](turbofan|opt|osr|osr[-_]from[-_]maglev)|freeze[-_]flags[-_]after[-_]init|(abort|exit)[-_]on[-_]contradictory[-_]flags)(=|\s|$)/;

/**
 * The V8s whose TurboFan optimizes during a start (`--trace-opt` to tools/list: 3 of zod's
 * functions on Node 20, 1 on Node 22). From V8 13 (Node 24 and 26) TurboFan optimizes none there,
 * so a hold would save no memory and only cost the flags' change (the builtins' code cache).
 */
const HOLD_BELOW_V8 = 13;
/** V8 before 11 (Node 18, older than the packages support) has no --turbofan flag (it was --opt): left alone. */
const HOLD_FROM_V8 = 11;

/**
 * Flags that `--no-turbofan` turns off with it and `--turbofan` does not turn back on, in the V8s
 * that have them: V8 12.4 (Node 22) ties OSR from Maglev to TurboFan. Set again only where the flags'
 * hash did not come back without them (an unknown flag is only lines on stderr).
 */
const TURNED_OFF_WITH_TURBOFAN = ['--osr-from-maglev'];

/**
 * Holds TurboFan back until the returned function is called (the first tool call, or the timer
 * above). A start builds the SDK's hundreds of schemas, so a few of zod's constructors got hot and
 * V8 optimized them (about 3 MB of TurboFan's own code paged in, and its compile on another
 * thread) for work that runs once. While it is held, V8 also compiles the Node modules loaded
 * without Node's own code cache (made under the default flags): hence the release on the first
 * tool call, which loads undici and node:http. The release restores the start's flags whole
 * (`startFlags`, their hash), so the process runs as configured and its cache is usable.
 */
function holdOptimizer(startFlags: number): () => void {
  const ownTiers = TIER_FLAGS.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);
  const v8 = Number.parseInt(process.versions.v8, 10);
  if (ownTiers || v8 < HOLD_FROM_V8 || v8 >= HOLD_BELOW_V8) return () => undefined;
  setFlagsFromString('--no-turbofan');
  // TurboFan was off already (the user's choice, however spelled): nothing to give back.
  if (cachedDataVersionTag() === startFlags) return () => undefined;
  // Called once: endOfStart takes it away before it calls it.
  return () => {
    setFlagsFromString('--turbofan');
    for (const flag of TURNED_OFF_WITH_TURBOFAN) {
      if (cachedDataVersionTag() === startFlags) return;
      const before = cachedDataVersionTag();
      setFlagsFromString(flag);
      // Not what was missing: as it was (a cache is then not written); unchanged if it was on already.
      const after = cachedDataVersionTag();
      if (after !== startFlags && after !== before) setFlagsFromString(flag.replace(/^--/, '--no-'));
    }
  };
}

/** Where the cache of this bundle (as it is now, on this Node) lives (exported for the tests). */
export function cacheFileOf(options: Pick<LaunchOptions, 'name' | 'buildId' | 'cacheDir'>, stat: { size: number; mtimeMs: number }): string {
  // The V8 version too: a runtime may report a Node version with another V8 (Electron's, say).
  const parts = [options.name, options.buildId, stat.size, Math.trunc(stat.mtimeMs), process.version, process.versions.v8, process.platform, process.arch];
  return join(options.cacheDir as string, `${parts.join('_')}.bin`);
}

/** Far more than any bundle's cache (about 0.6 MB). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The cache, if what is at its name when read is a regular file of this user's that others may not
 * write. The folders were judged once, by path, following links: a link another user owns (in the
 * sticky /tmp) passes while it points at a folder of ours, and may point elsewhere by the time of
 * the read. Not through a link, and never waiting on a FIFO.
 */
function readIfThere(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_CACHE_BYTES) return undefined;
    if (process.getuid && (stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0)) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A cache file is the SHA-256 of V8's data, then the data (against damage; the folder checks keep attackers out). */
const DIGEST_BYTES = 32;
const digestOf = (data: Uint8Array) => createHash('sha256').update(data).digest();

/** What a cache file holds for V8's `data` (exported for the tests, which plant caches). */
export function cacheFileBytes(data: Uint8Array): Buffer {
  return Buffer.concat([digestOf(data), data]);
}

/** V8's data, when the file holds it whole and unchanged. */
function intact(stored: Buffer): Buffer | undefined {
  const data = stored.subarray(DIGEST_BYTES);
  return stored.length > DIGEST_BYTES && digestOf(data).equals(stored.subarray(0, DIGEST_BYTES)) ? data : undefined;
}

function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // a read-only cache still serves
  }
}

function later(ms: number, work: () => boolean): Promise<boolean> {
  return new Promise((resolve) => setTimeout(() => resolve(work()), ms).unref());
}

/** Caches of this bundle's other builds unused this long are removed (two installs of one server may take turns). */
const STALE_AFTER_MS = 7 * 24 * 60 * 60 * 1000;

/** Written whole under a temporary name, then renamed; this bundle's stale caches are removed. */
function writeCache(script: Script, file: string): boolean {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    const data = script.createCachedData();
    // A new file only ('wx': O_EXCL, which never follows a link): whatever is at the temporary name
    // (one left by a crash, or a link planted there through a folder swapped since it was checked)
    // is removed, not written through.
    rmSync(temporary, { force: true });
    writeFileSync(temporary, cacheFileBytes(data), { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
    const dir = dirname(file);
    const name = file.slice(dir.length + 1).split('_')[0];
    for (const other of readdirSync(dir)) {
      const path = join(dir, other);
      // Also the temporary files of writes cut short (the process killed while writing).
      const ours = other.split('_')[0] === name && (other.endsWith('.bin') || other.endsWith('.tmp'));
      if (ours && Date.now() - statSync(path).mtimeMs > STALE_AFTER_MS) rmSync(path, { force: true });
    }
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  }
}
