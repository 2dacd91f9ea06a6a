// engage-mcp-audit: checks and reads the record of every write the engage-mcp servers made.
//   engage-mcp-audit verify [file]    checks the chain; names the first line that breaks it (exit 1)
//   engage-mcp-audit tail [file] [-n N]   the last N lines (20), for a person
// The record's secret and where the chain stands are read from the state directory the servers
// use: --state-dir, else ENGAGE_STATE_DIR, else $XDG_STATE_HOME/engage-mcp or ~/.local/state/engage-mcp.
// --remote: the file is an export of remote mode's record in Redis (one key's list, LRANGE'd); its
// secret is derived from ENGAGE_STATE_SECRET, the service's, and it may begin where the cap cut it.
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import {
  type AuditHead,
  REMOTE_AUDIT_KEPT_LINES,
  SECRET_FILE,
  forShell,
  homeStateDir,
  oneLine,
  readSecret,
  readState,
  remoteAuditSecret,
  verifyAuditLines,
} from '@engage-mcp/shared/audit-reader';
import { defaultRecordProblem, LONG_LINE_MARK, MAX_LINE_CHARS, NOT_UTF8_MARK, recordLines } from './record-lines.js';

/** One line for the terminal: the record's text may carry control characters (ESC sequences rewrite a terminal), so each is escaped. */
function say(text: string, to: NodeJS.WriteStream = process.stdout): void {
  if (to.destroyed) return;
  to.write(`${oneLine(text)}\n`);
}

/**
 * A reader that left (`tail | head -1`, a pager quit) closes the pipe: the next line written fails
 * with EPIPE, which unheard ended the command with Node's stack trace. What is left unsaid is
 * dropped, and the exit status stays the command's.
 */
function endQuietlyWhenReaderLeaves(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    stream.destroy();
  });
}

const USAGE = `usage: engage-mcp-audit verify [file] [--state-dir DIR]
       engage-mcp-audit verify --remote file      (an export of remote mode's record; ENGAGE_STATE_SECRET set as on the service)
       engage-mcp-audit tail [file] [-n N] [--state-dir DIR]
       engage-mcp-audit tail --remote file [-n N] (the last lines of such an export, for a person)
The file is ENGAGE_AUDIT_LOG, or audit.jsonl in the state directory.`;

interface Options {
  command: string | undefined;
  file: string | undefined;
  /** The person named the file (else it is the servers' record, found as they find it). */
  named: boolean;
  /** Undefined only where nothing needs it (tail of a named file, verify --remote). */
  stateDir: string | undefined;
  count: number;
  remote: boolean;
}

/** Where no home folder can be found (HOME unset, no passwd entry), os.homedir() throws: the default is then no folder at all. */
const NO_HOME =
  'no home folder could be found for the default state directory (HOME is unset or not an absolute path, and this user has no passwd entry with an absolute home): give --state-dir DIR or set ENGAGE_STATE_DIR';

function parseArguments(argv: string[], env: NodeJS.ProcessEnv): Options | string {
  const rest = [...argv];
  // The default is looked for only when nothing names the folder (--state-dir, ENGAGE_STATE_DIR).
  let stateDir = env.ENGAGE_STATE_DIR?.trim() || undefined;
  let stateDirGiven = false;
  let count = 20;
  let remote = false;
  const positional: string[] = [];
  while (rest.length > 0) {
    const arg = rest.shift() as string;
    if (arg === '--state-dir') {
      // resolve('') is the working folder: `--state-dir "$UNSET"` checked whatever record lay there.
      const given = rest.shift();
      if (!given?.trim() || given.startsWith('-')) return `--state-dir needs a folder\n${USAGE}`;
      stateDir = resolve(given);
      stateDirGiven = true;
    } else if (arg === '-n') count = Number(rest.shift());
    else if (arg === '--remote') remote = true;
    else if (arg === '-h' || arg === '--help') return USAGE;
    else positional.push(arg);
  }
  if (!Number.isInteger(count) || count < 1) return `-n must be a whole number of at least 1\n${USAGE}`;
  const [command, file] = positional;
  if (remote && !file) return `--remote needs the exported file\n${USAGE}`;
  const relative = relativeSetting(env, [...(stateDirGiven ? [] : ['ENGAGE_STATE_DIR']), ...(file ? [] : ['ENGAGE_AUDIT_LOG'])]);
  if (relative) return relative;
  stateDir ??= homeStateDir(env);
  const record = file ? resolve(file) : env.ENGAGE_AUDIT_LOG?.trim() || (stateDir === undefined ? undefined : join(stateDir, 'audit.jsonl'));
  // verify reads the record's secret and chain head from the state directory (--remote, from ENGAGE_STATE_SECRET).
  if (record === undefined || (command === 'verify' && !remote && stateDir === undefined)) return NO_HOME;
  return { command, file: record, named: file !== undefined, stateDir, count, remote };
}

/** The servers refuse a relative ENGAGE_STATE_DIR or ENGAGE_AUDIT_LOG (it would name another folder from each working folder); so does this command, for the settings it uses. */
function relativeSetting(env: NodeJS.ProcessEnv, names: string[]): string | undefined {
  for (const name of names) {
    const raw = env[name]?.trim();
    if (raw && !isAbsolute(raw)) return `${name} must be an absolute path, as the servers require (got ${JSON.stringify(raw.slice(0, 80))})`;
  }
  return undefined;
}

/** Why a line read (record-lines.ts) cannot be one of the record, by its number: too long, or not UTF-8. */
type Unreadable = Map<number, string>;

/** The record's lines as they are read (record-lines.ts); `unreadable` gets the number of each line that cannot be one of the record, and why. */
function* readLines(options: Options & { file: string }, unreadable?: Unreadable): Generator<string> {
  const problem = options.named ? undefined : defaultRecordProblem(options.file);
  if (problem) throw new Error(problem);
  let number = 0;
  for (const line of recordLines(options.file)) {
    number += 1;
    if (line.endsWith(LONG_LINE_MARK)) unreadable?.set(number, `longer than any line of the record (over ${MAX_LINE_CHARS / 1024 / 1024} MiB), not read on`);
    else if (line.endsWith(NOT_UTF8_MARK)) unreadable?.set(number, 'not UTF-8 text, which the servers always write');
    yield line;
  }
}

/** Remote mode's secret, derived from the service's ENGAGE_STATE_SECRET exactly as the service derives it. */
function remoteSecret(): Buffer {
  const stateSecret = process.env.ENGAGE_STATE_SECRET;
  if (!stateSecret) throw new Error("--remote needs ENGAGE_STATE_SECRET, set to the service's value");
  return remoteAuditSecret(new TextEncoder().encode(stateSecret));
}

/**
 * The record where it is found by default does not exist: no write has ended with this state
 * directory yet (nothing to verify), unless the store recorded lines of it (then it was removed).
 */
function noRecordYet(options: Options & { file: string }): number | undefined {
  if (options.named || options.remote || existsSync(options.file)) return undefined;
  const head = recordedHead(options);
  if (head && head.seq > 0) {
    say(`${options.file}: missing: the store recorded ${linesCount(head.seq)} of it, and the file is gone.`);
    return 1;
  }
  say(`${options.file}: no audit record yet (no write has ended with this state directory).`);
  return 0;
}

const linesCount = (count: number) => `${count} line${count === 1 ? '' : 's'}`;

function verify(options: Options & { file: string }): number {
  const none = noRecordYet(options);
  if (none !== undefined) return none;
  const unreadable: Unreadable = new Map();
  const keys = new Set<string>();
  const lines = readLines(options, unreadable);
  const verdict = options.remote
    ? verifyAuditLines(remoteSecret(), keysNoted(lines, keys), undefined, REMOTE_AUDIT_KEPT_LINES)
    : verifyAuditLines(readSecret(stateDirOf(options)), lines, recordedHead(options));
  if (!options.remote) warnIfSecretShown(stateDirOf(options));
  if (verdict.ok) {
    const which = verdict.first ? `lines ${verdict.first} to ${verdict.lines} (the cap dropped the older ones)` : linesCount(verdict.lines);
    say(`${options.file}: ${which}, the chain is intact${options.remote ? `; ${whoseLines(keys)}` : ''}.`);
    return 0;
  }
  if (verdict.otherSecret) {
    say(`${options.file}: ${verdict.why}.`);
    return 1;
  }
  const why = unreadable.get(verdict.line) ?? verdict.why;
  say(`${options.file}: line ${verdict.line}: ${why}. The record was changed from that line on.`);
  return 1;
}

/**
 * Remote mode chains every key's list with the one secret, so a whole list renamed onto another
 * key's name in Redis still verifies: the keys its lines name are said, to be compared with the
 * name of the list exported (`engage:audit:{<key>}`).
 */
function* keysNoted(lines: Iterable<string>, keys: Set<string>): Generator<string> {
  for (const line of lines) {
    try {
      const key = (JSON.parse(line) as { key?: unknown } | null)?.key;
      if (typeof key === 'string') keys.add(key);
    } catch {
      // Not JSON: verify names the line.
    }
    yield line;
  }
}

function whoseLines(keys: Set<string>): string {
  const named = [...keys].slice(0, 3).join(', ');
  // Several only in the record of keys the API refused (`{~refused-keys}`), kept for all such keys together.
  return keys.size === 1 ? `every line is of key ${named}` : `its lines are of ${keys.size} keys (${named}${keys.size > 3 ? ', …' : ''})`;
}

/**
 * The chain proves nothing to whoever else could read its secret: they could have written lines
 * that verify. The servers make audit.key 0600 and refuse it only when others may write it, so a
 * copy restored or chmod'ed readable by others goes on being used unsaid; verify says it (stderr).
 */
function warnIfSecretShown(stateDir: string): void {
  if (process.platform === 'win32') return;
  const path = join(stateDir, SECRET_FILE);
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o044) === 0) return;
  const octal = mode.toString(8).padStart(4, '0');
  say(
    `engage-mcp-audit: warning: ${path} can be read by other users (mode ${octal}): any of them could have written lines that verify. Run: chmod 600 ${forShell(path)}`,
    process.stderr,
  );
}

/** The state directory, which parseArguments makes sure of for a verify without --remote. */
function stateDirOf(options: Options): string {
  if (options.stateDir === undefined) throw new Error(NO_HOME);
  return options.stateDir;
}

/**
 * Where the store says the chain ends; a damaged state file is said (stderr) and the lines are still
 * checked. The store keeps it under the path the servers were given (ENGAGE_AUDIT_LOG as set, a
 * `//` in it kept), so it is found under any spelling of the file's path.
 */
function recordedHead(options: Options & { file: string }) {
  try {
    const file = resolve(options.file);
    // Servers given two spellings keep a head under each: the furthest is where the chain ends.
    const heads = Object.entries(readState(stateDirOf(options)).audit).filter(([path]) => resolve(path) === file);
    return heads.map(([, head]) => head).reduce<AuditHead | undefined>((furthest, head) => (furthest && furthest.seq >= head.seq ? furthest : head), undefined);
  } catch (error) {
    say(`engage-mcp-audit: ${error instanceof Error ? error.message : String(error)}; lines cut from the record's end cannot be noticed.`, process.stderr);
    return undefined;
  }
}

function tail(options: Options & { file: string }): number {
  const none = noRecordYet(options);
  if (none !== undefined) return none;
  for (const line of lastLines(readLines(options), options.count)) for (const shownLine of describedLine(line)) say(shownLine);
  return 0;
}

/** A line of the record as a person reads it, in two lines; anything else as what it is. */
function describedLine(line: string): string[] {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new TypeError('not an object');
  } catch {
    return [`(not a line of the record) ${line.slice(0, 120)}`];
  }
  const client = typeof entry.client === 'object' && entry.client !== null ? (entry.client as Record<string, unknown>) : undefined;
  const status = entry.apiStatus === undefined ? '' : ` HTTP ${shown(entry.apiStatus)}`;
  const who = client
    ? ` by ${client.name === undefined ? '?' : shown(client.name)} ${client.version === undefined ? '' : shown(client.version)}`.trimEnd()
    : '';
  // Written later by another server: the time is the write's claim, the outcome what could be known.
  const orphaned = entry.orphaned === true ? ' (its server stopped with it at the API; recorded later by another)' : '';
  const what = `#${shown(entry.seq)} ${shown(entry.time)} ${shown(entry.operationId)}: ${shown(entry.outcome)}${status}${orphaned}`;
  return [
    `${what}; confirmation: ${shown(entry.confirmation)}; ${shown(entry.server)}${who}; key ${shown(entry.key)}`,
    `    params ${shown(entry.params, 4000, true)}`,
  ];
}

/**
 * A field as a person reads it, whatever JSON a line holds there: String() of an object with a
 * "toString" field threw (tail stopped at that line, the newest writes after it unshown), and a
 * field of megabytes filled the terminal. Cut to `most` characters; `json`: strings quoted too.
 */
function shown(value: unknown, most = 200, json = false): string {
  let text: string;
  try {
    text = typeof value === 'string' && !json ? value : (JSON.stringify(value) ?? 'undefined');
  } catch {
    text = '(nested too deeply to show)';
  }
  return text.length > most ? `${text.slice(0, most)}…(${text.length - most} more characters)` : text;
}

/** The last `count` lines, the record read through once. */
function lastLines(lines: Iterable<string>, count: number): string[] {
  const kept: string[] = [];
  for (const line of lines) {
    kept.push(line);
    if (kept.length >= 2 * count + 1024) kept.splice(0, kept.length - count);
  }
  return kept.slice(-count);
}

function main(): number {
  endQuietlyWhenReaderLeaves(process.stdout);
  endQuietlyWhenReaderLeaves(process.stderr);
  const options = parseArguments(process.argv.slice(2), process.env);
  if (typeof options === 'string') {
    process.stdout.write(`${options}\n`);
    return options === USAGE ? 0 : 2;
  }
  const withFile = options as Options & { file: string };
  try {
    if (options.command === 'verify') return verify(withFile);
    if (options.command === 'tail') return tail(withFile);
  } catch (error) {
    say(`engage-mcp-audit: ${error instanceof Error ? error.message : String(error)}`, process.stderr);
    return 2;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

process.exitCode = main();
