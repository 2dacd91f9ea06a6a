// Configuration from the environment. A bad setting never crashes a server: it is reported once
// on stderr at start and in every tool answer, and nothing is sent.
import { readFileSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import type { LogLevel } from '../safe/log.js';

export type { LogLevel };

export type ConfirmMode = 'destructive' | 'all' | 'none';

export interface Config {
  apiKey: string;
  baseUrl: URL;
  authHeader: 'x-api-key' | 'bearer';
  timeoutMs: number;
  maxRetryWaitSeconds: number;
  readOnly: boolean;
  allow: string[] | undefined;
  deny: string[];
  confirm: ConfirmMode;
  /** ENGAGE_CONFIRM's operation patterns: named operations gated (`campaign.create`) or not (`-inbox.ticket.close`). */
  confirmPatterns: { gate: string[]; skip: string[] };
  logLevel: LogLevel;
  guardrails: Guardrails;
}

/** The limits a tenant owner sets (ENGAGE_CAP_*, ENGAGE_QUIET_HOURS), and where their state lives. */
export interface Guardrails {
  recipientsPerSend: number | undefined;
  messagesPerDay: number | undefined;
  /** Minutes after local midnight; start > end is a window over midnight (21:00-08:00). */
  quietHours: { start: number; end: number; text: string } | undefined;
  /** IANA time zone of the quiet hours and of the day the daily cap counts. */
  timeZone: string;
  /**
   * Where the stdio servers' file store keeps its state, and the audit record's file. Undefined in
   * remote mode, which reads neither ENGAGE_STATE_DIR nor ENGAGE_AUDIT_LOG (its state is in Redis or
   * its memory), and, for the state directory, where ENGAGE_STATE_DIR is unset and no home folder
   * can be found for its default (HOME unset, the user without a passwd entry: os.homedir() throws):
   * the server still starts, and its writes are refused, saying so (mcp/stdio.ts).
   */
  stateDir: string | undefined;
  auditLog: string | undefined;
}

/** A failure still carries ENGAGE_API_KEY as it was set (`secrets`): the answers and log lines that quote the problems are redacted with it. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[]; logLevel: LogLevel; secrets: string[] };

/** The seven servers; a pattern naming another one's operations is meant for that server. */
export const DOMAIN_NAMES = ['contact', 'campaign', 'inbox', 'channel', 'product', 'billing', 'tenant'];

const LOG_LEVELS: LogLevel[] = ['error', 'warn', 'info', 'debug'];

/** Settings that decide what runs without a person's yes: only the host's own environment sets them. */
const HOST_ONLY_SETTINGS = [
  'ENGAGE_CONFIRM',
  'ENGAGE_READ_ONLY',
  'ENGAGE_OPERATIONS_ALLOW',
  'ENGAGE_OPERATIONS_DENY',
  'ENGAGE_CAP_RECIPIENTS_PER_SEND',
  'ENGAGE_CAP_MESSAGES_PER_DAY',
  'ENGAGE_QUIET_HOURS',
  'ENGAGE_TIMEZONE',
  'ENGAGE_STATE_DIR',
  'ENGAGE_AUDIT_LOG',
];
/**
 * The only names a .env may set (an allow list, not a deny list): anything else, NODE_OPTIONS or
 * NODE_TLS_REJECT_UNAUTHORIZED say, would let a file in the working directory change how the
 * process runs or where the key goes. Names are compared exactly: on Windows the environment is
 * case-blind, so `engage_confirm` must not slip past as another name.
 */
const DOTENV_SETTINGS = ['ENGAGE_API_KEY', 'ENGAGE_BASE_URL', 'ENGAGE_AUTH_HEADER', 'ENGAGE_TIMEOUT_MS', 'ENGAGE_MAX_RETRY_WAIT_S', 'ENGAGE_LOG_LEVEL'];

export interface DotenvSettings {
  /** What the .env may add to the environment (names the environment does not set). */
  values: Record<string, string>;
  /** What was ignored, and why, for stderr; names only, never values. */
  warnings: string[];
}

/**
 * A `.env` in the working directory fills in what the host's environment leaves unset. Anyone who
 * can write a file where the server starts could otherwise switch confirmation off or widen the
 * allow list, so HOST_ONLY_SETTINGS in a .env are reported and ignored; and while the host's
 * environment holds the key, a .env cannot choose where the key is sent (ENGAGE_BASE_URL).
 * The file is parsed, not loaded with dotenv's config(): DOTENV_CONFIG_DEBUG and friends would make
 * that print to stdout, which is the protocol.
 */
export function loadDotenvSafely(env: NodeJS.ProcessEnv, cwd: string): DotenvSettings {
  const path = join(cwd, '.env');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { values: {}, warnings: code === 'ENOENT' ? [] : [`${path} could not be read (${String(code ?? 'error')}); it was ignored.`] };
  }
  const values: Record<string, string> = {};
  const refused: string[] = [];
  const unknown: string[] = [];
  let refusedBaseUrl = false;
  const hostNames = new Set(Object.keys(env).map((name) => name.toUpperCase()));
  for (const [name, value] of Object.entries(parseDotenv(text))) {
    const upper = name.toUpperCase();
    if (HOST_ONLY_SETTINGS.includes(upper)) refused.push(name);
    else if (!DOTENV_SETTINGS.includes(name)) unknown.push(name);
    else if (hostNames.has(upper))
      continue; // the host's environment wins, as dotenv does it
    else if (name === 'ENGAGE_BASE_URL' && env.ENGAGE_API_KEY !== undefined) refusedBaseUrl = true;
    else values[name] = value;
  }
  const warnings: string[] = [];
  if (refused.length > 0) {
    warnings.push(
      `${path} sets ${refused.map(printableName).join(', ')}, which it may not: what runs without a person's yes and the guardrails (${HOST_ONLY_SETTINGS.join(', ')}) are read only from the host's environment (the env block of the MCP configuration). Ignored.`,
    );
  }
  if (unknown.length > 0) {
    warnings.push(
      `${path} sets ${unknown.slice(0, 10).map(printableName).join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}: a .env may set only ${DOTENV_SETTINGS.join(', ')}. Ignored.`,
    );
  }
  if (refusedBaseUrl) {
    warnings.push(
      `${path} sets ENGAGE_BASE_URL while the key comes from the host's environment: a .env may not choose where that key is sent. Ignored; set ENGAGE_BASE_URL in the host's environment.`,
    );
  }
  return { values, warnings };
}

/**
 * ENGAGE_* names in the host's environment that look like a mistyped setting of these servers
 * (ENGAGE_READONLY for ENGAGE_READ_ONLY): ignored like any other name, so a person who meant a
 * safety setting would believe it applied. One line for stderr, names only, never values.
 * `ownSettings`: a program's settings besides the servers' (remote mode's ENGAGE_HTTP_*).
 */
export function misspelledSettings(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  ownSettings: readonly string[] = [],
): string | undefined {
  const known = [...DOTENV_SETTINGS, ...HOST_ONLY_SETTINGS, ...ownSettings];
  const squeeze = (name: string) => name.toUpperCase().replace(/_/g, '');
  const guesses = Object.keys(env).flatMap((name) => {
    if (!/^engage_/i.test(name) || name.length > 64 || known.includes(name)) return [];
    // Windows' environment is case-blind: engage_read_only is ENGAGE_READ_ONLY there.
    if (platform === 'win32' && known.includes(name.toUpperCase())) return [];
    const [meant] = known
      .map((setting) => ({ setting, distance: editDistance(squeeze(setting), squeeze(name)) }))
      .filter(({ distance }) => distance <= 2)
      .sort((a, b) => a.distance - b.distance);
    return meant ? [`${printableName(name)} is not a setting of this server and was ignored: did you mean ${meant.setting}?`] : [];
  });
  return guesses.length > 0 ? guesses.join(' ') : undefined;
}

/** Levenshtein's distance, a transposition counted as two (short names only). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** A name from a file, safe for a log line: printable ASCII, cut short. */
function printableName(name: string): string {
  const safe = name.replace(/[^\x21-\x7e]/g, '?');
  return safe.length > 64 ? `${safe.slice(0, 64)}…` : safe;
}

/**
 * Whether a key is made of printable ASCII, as the API's keys are. Anything else is no key: the
 * redactor recognises a key's forms in ASCII only (redact.ts), so such a key could be echoed
 * unredacted. Checked wherever a key comes in (the configuration, remote requests, the consent page).
 */
export function isPrintableAsciiKey(key: string): boolean {
  return /^[\x21-\x7e]+$/.test(key);
}

/**
 * `keyPerRequest` (remote mode): no key is configured, each request brings its own; ENGAGE_API_KEY
 * is then neither needed nor used, and `apiKey` is empty.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv,
  domain: string,
  operationIds: readonly string[],
  { keyPerRequest = false }: { keyPerRequest?: boolean } = {},
): ConfigResult {
  const problems: string[] = [];
  const read = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  const logLevel = oneOf(read('ENGAGE_LOG_LEVEL'), LOG_LEVELS, 'warn', 'ENGAGE_LOG_LEVEL', problems);

  const apiKey = keyPerRequest ? '' : read('ENGAGE_API_KEY');
  // A value no key could be: only there is a placeholder or a reference inside it one (isUnfilledKey).
  const noKey = apiKey !== undefined && (isUnfilledKey(apiKey) || !isPrintableAsciiKey(apiKey));
  if (apiKey === undefined) problems.push('ENGAGE_API_KEY is not set: set it to the tenant API key (create one in the tenant console under API key settings).');
  else if (noKey && isUnfilledReference(apiKey)) problems.push(unfilledReference('ENGAGE_API_KEY'));
  else if (noKey && isPlaceholder(apiKey))
    problems.push(
      'ENGAGE_API_KEY is still a placeholder from the README: replace it with the tenant API key (create one in the tenant console under API key settings).',
    );
  else if (/[\s\p{Cc}]/u.test(apiKey)) problems.push('ENGAGE_API_KEY contains spaces or control characters: paste the key exactly as the console showed it.');
  else if (!keyPerRequest && !isPrintableAsciiKey(apiKey))
    problems.push('ENGAGE_API_KEY contains characters beyond ASCII: paste the key exactly as the console showed it.');

  const baseUrl = parseBaseUrl(read('ENGAGE_BASE_URL'), problems);

  const authHeaderRaw = read('ENGAGE_AUTH_HEADER')?.toLowerCase();
  const authHeader = oneOf(authHeaderRaw, ['x-api-key', 'bearer'] as const, 'x-api-key', 'ENGAGE_AUTH_HEADER', problems);

  const timeoutMs = integer(read('ENGAGE_TIMEOUT_MS'), 30_000, 100, 600_000, 'ENGAGE_TIMEOUT_MS', problems);
  const maxRetryWaitSeconds = integer(read('ENGAGE_MAX_RETRY_WAIT_S'), 60, 0, 3_600, 'ENGAGE_MAX_RETRY_WAIT_S', problems);
  const readOnly = boolean(read('ENGAGE_READ_ONLY'), 'ENGAGE_READ_ONLY', problems);
  const { confirm, confirmPatterns } = confirmPolicy(read('ENGAGE_CONFIRM'), domain, operationIds, problems);

  const allowRaw = read('ENGAGE_OPERATIONS_ALLOW');
  const allow = allowRaw === undefined ? undefined : patterns(allowRaw, 'ENGAGE_OPERATIONS_ALLOW', domain, operationIds, problems);
  const deny = patterns(read('ENGAGE_OPERATIONS_DENY') ?? '', 'ENGAGE_OPERATIONS_DENY', domain, operationIds, problems);

  const guardrails = loadGuardrails(read, env, problems, keyPerRequest);

  if (problems.length > 0 || apiKey === undefined || !baseUrl) return { ok: false, problems, logLevel, secrets: apiKey ? [apiKey] : [] };
  return {
    ok: true,
    config: { apiKey, baseUrl, authHeader, timeoutMs, maxRetryWaitSeconds, readOnly, allow, deny, confirm, confirmPatterns, logLevel, guardrails },
  };
}

const CONFIRM_LEVELS = ['destructive', 'all', 'none'] as const;

/**
 * ENGAGE_CONFIRM: a risk level and operation patterns, comma separated (`destructive,campaign.create`,
 * `all,-inbox.ticket.close`). Without a level the default (destructive) stands: naming one
 * operation never switches the others' questions off.
 */
function confirmPolicy(raw: string | undefined, domain: string, operationIds: readonly string[], problems: string[]) {
  const items = (raw ?? '').split(',').map((item) => item.trim());
  const levels = items.filter((item) => (CONFIRM_LEVELS as readonly string[]).includes(item.toLowerCase()));
  if (levels.length > 1) problems.push(`ENGAGE_CONFIRM names more than one level (${levels.join(', ')}): give one of ${CONFIRM_LEVELS.join(', ')}.`);
  const confirm = (levels[0]?.toLowerCase() ?? 'destructive') as ConfirmMode;
  const named = items.filter((item) => item !== '' && !levels.includes(item));
  const strays = named.filter((item) => !item.includes('.') && !item.includes('*'));
  if (strays.length > 0)
    problems.push(
      `ENGAGE_CONFIRM must be one of ${CONFIRM_LEVELS.join(', ')}, or a comma list of one of those and operationId patterns (campaign.create, -inbox.ticket.close) (got ${JSON.stringify(strays[0]!.slice(0, 40))}).`,
    );
  const gate = named.filter((item) => !strays.includes(item) && !item.startsWith('-'));
  const skip = named.filter((item) => !strays.includes(item) && item.startsWith('-')).map((item) => item.slice(1));
  return {
    confirm,
    confirmPatterns: {
      gate: patterns(gate.join(','), 'ENGAGE_CONFIRM', domain, operationIds, problems),
      skip: patterns(skip.join(','), 'ENGAGE_CONFIRM', domain, operationIds, problems),
    },
  };
}

function loadGuardrails(read: (name: string) => string | undefined, env: NodeJS.ProcessEnv, problems: string[], keyPerRequest: boolean): Guardrails {
  const cap = (name: string) => {
    const raw = read(name);
    return raw === undefined ? undefined : integer(raw, 0, 0, 10_000_000, name, problems);
  };
  // Checked only when set: building the first Intl.DateTimeFormat loads ICU's time-zone data (about 8 MiB of a
  // server's memory), which a server without quiet hours or caps never needs.
  const timeZone = read('ENGAGE_TIMEZONE') ?? 'UTC';
  if (timeZone !== 'UTC' && !isTimeZone(timeZone))
    problems.push(`ENGAGE_TIMEZONE must be an IANA time zone such as Asia/Jakarta (got ${JSON.stringify(timeZone.slice(0, 40))}).`);
  const limits = {
    recipientsPerSend: cap('ENGAGE_CAP_RECIPIENTS_PER_SEND'),
    messagesPerDay: cap('ENGAGE_CAP_MESSAGES_PER_DAY'),
    quietHours: quietHours(read('ENGAGE_QUIET_HOURS'), problems),
    timeZone,
  };
  // Remote mode keeps this state in Redis or its memory: a state folder it would not use neither
  // stops its start (a relative one, a file) nor is looked for in a home it may not have.
  if (keyPerRequest) return { ...limits, stateDir: undefined, auditLog: undefined };
  const stateDir = ofKind(absolutePath(read('ENGAGE_STATE_DIR'), 'ENGAGE_STATE_DIR', problems), 'folder', 'ENGAGE_STATE_DIR', problems) ?? homeStateDir(env);
  const auditLog = ofKind(absolutePath(read('ENGAGE_AUDIT_LOG'), 'ENGAGE_AUDIT_LOG', problems), 'file', 'ENGAGE_AUDIT_LOG', problems);
  return { ...limits, stateDir, auditLog: auditLog ?? (stateDir === undefined ? undefined : join(stateDir, 'audit.jsonl')) };
}

/** defaultStateDir, or undefined where no home folder can be found (HOME unset, no passwd entry), for which os.homedir() throws. */
export function homeStateDir(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return defaultStateDir(env);
  } catch {
    return undefined;
  }
}

/** $XDG_STATE_HOME/engage-mcp, else ~/.local/state/engage-mcp (the XDG default). */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  return join(xdg && isAbsolute(xdg) ? xdg : join(homeFolder(env.HOME?.trim()), '.local', 'state'), 'engage-mcp');
}

/**
 * HOME where it is an absolute path. One that is relative, or empty, is passed over, as a relative
 * XDG_STATE_HOME is (os.homedir() answers it as it stands, and the state would go under whatever
 * folder the host started the server in, one per folder): the user's passwd entry's home is taken,
 * where that is absolute (an entry's home field may be empty, or relative, as HOME may). Throws
 * where there is none (os.homedir, os.userInfo, or neither absolute).
 */
function homeFolder(home: string | undefined): string {
  if (home && isAbsolute(home)) return home;
  const found = homedir();
  if (isAbsolute(found)) return found;
  const own = userInfo().homedir;
  if (isAbsolute(own)) return own;
  throw new Error(`no absolute home folder: HOME and the passwd entry's home are ${JSON.stringify(found)} and ${JSON.stringify(own)}`);
}

function absolutePath(raw: string | undefined, name: string, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  if (isAbsolute(raw)) return raw;
  problems.push(`${name} must be an absolute path (got ${JSON.stringify(raw.slice(0, 80))}).`);
  return undefined;
}

/**
 * A path that is there as the other kind (a state folder that is a file) fails every write, and
 * the model could only be told of an internal error: said at start instead. One still to be made is fine.
 */
function ofKind(path: string | undefined, kind: 'folder' | 'file', name: string, problems: string[]): string | undefined {
  if (path === undefined) return undefined;
  let found: 'folder' | 'file' | 'below a file' | undefined;
  try {
    found = statSync(path).isDirectory() ? 'folder' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') found = 'below a file';
  }
  if (found === undefined || found === kind) return path;
  problems.push(`${name} must name a ${kind}, and ${JSON.stringify(path.slice(0, 80))} is ${found === 'below a file' ? found : `a ${found}`}.`);
  return undefined;
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** `21:00-08:00`: a daily window in local time; start and end the same would be every minute or none, so it is refused. */
function quietHours(raw: string | undefined, problems: string[]): Guardrails['quietHours'] {
  if (raw === undefined) return undefined;
  const match = /^([01]\d|2[0-3]):([0-5]\d)\s*-\s*([01]\d|2[0-3]):([0-5]\d)$/.exec(raw);
  const start = match ? Number(match[1]) * 60 + Number(match[2]) : 0;
  const end = match ? Number(match[3]) * 60 + Number(match[4]) : 0;
  if (!match || start === end) {
    problems.push(`ENGAGE_QUIET_HOURS must be a window HH:MM-HH:MM in 24-hour local time, such as 21:00-08:00 (got ${JSON.stringify(raw.slice(0, 40))}).`);
    return undefined;
  }
  return { start, end, text: `${match[1]}:${match[2]}-${match[3]}:${match[4]}` };
}

function parseBaseUrl(raw: string | undefined, problems: string[]): URL | undefined {
  if (!raw) {
    problems.push('ENGAGE_BASE_URL is not set: set it to the API base address, e.g. https://api.example.com.');
    return undefined;
  }
  if (isUnfilledReference(raw)) {
    problems.push(unfilledReference('ENGAGE_BASE_URL'));
    return undefined;
  }
  if (isPlaceholder(raw)) {
    problems.push("ENGAGE_BASE_URL is still a placeholder from the README: replace it with the API's base address, e.g. https://api.example.com.");
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push(`ENGAGE_BASE_URL is not a URL: expected an address such as https://api.example.com.`);
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash) {
    problems.push('ENGAGE_BASE_URL must be a plain base address: no credentials, query or fragment.');
    return undefined;
  }
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) {
    problems.push('ENGAGE_BASE_URL must use https (plain http is allowed only on loopback, for the sandbox): the key would travel unencrypted.');
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.push('ENGAGE_BASE_URL must be an https address.');
    return undefined;
  }
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/** A value copied from the README and not filled in (`<your tenant API key>`, `https://…`): no key or address holds <…> or an ellipsis. */
function isPlaceholder(value: string): boolean {
  return /<[^<>]*>|…/.test(value);
}

/**
 * `${ENGAGE_API_KEY}`, `${env:…}`, `$NAME`, `${user_config.…}`: a host's reference to a variable,
 * left as it was (a host that does not expand it, an entry copied between hosts). As a key it would
 * be sent and refused, and the person told to make a new key when the fix is the environment.
 */
function isUnfilledReference(value: string): boolean {
  return /\$\{[^}]*\}/.test(value) || /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(value);
}

/**
 * A key is any printable ASCII, `<`, `$` and `{` included: inside a key that would otherwise be
 * taken, only a whole-value placeholder or reference (`<key>`, `${ENGAGE_API_KEY}`) is one.
 * Remote mode asks it of the key a request brings (a connector's header left unexpanded).
 */
export function isUnfilledKey(value: string): boolean {
  return /^(<[^<>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)$/.test(value);
}

const unfilledReference = (name: string) =>
  `${name} is a reference to a variable (\${…} or $NAME) that the host did not fill in: set ${name} in the environment the host starts in.`;

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

function oneOf<T extends string>(raw: string | undefined, allowed: readonly T[], fallback: T, name: string, problems: string[]): T {
  if (raw === undefined) return fallback;
  if ((allowed as readonly string[]).includes(raw)) return raw as T;
  // Not "… bearer (got …)": the log's redaction reads "bearer" and a word after a blank as a credential.
  // Only a word is quoted (a mistyped choice): ENGAGE_AUTH_HEADER may hold the key, or "Bearer <key>",
  // pasted as the header's value, and nothing redacts a key ENGAGE_API_KEY does not hold.
  const shown = /^[A-Za-z][A-Za-z-]{0,15}$/.test(raw) ? JSON.stringify(raw) : 'the value given (not shown: it may be the key)';
  problems.push(`${name} must be one of ${allowed.join(', ')}, not ${shown}.`);
  return fallback;
}

function integer(raw: string | undefined, fallback: number, min: number, max: number, name: string, problems: string[]): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    problems.push(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw.slice(0, 40))}).`);
    return fallback;
  }
  return value;
}

function boolean(raw: string | undefined, name: string, problems: string[]): boolean {
  if (raw === undefined) return false;
  const value = raw.toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  problems.push(`${name} must be true or false (got ${JSON.stringify(raw.slice(0, 40))}).`);
  return false;
}

/**
 * Comma lists of operationIds with `*` wildcards (`campaign.*`, `*.delete`). Users often share one
 * list across all seven servers, so a pattern naming another domain is simply not this server's;
 * a pattern naming no known domain, or this domain but none of its operations, is a mistake.
 */
function patterns(raw: string, name: string, domain: string, operationIds: readonly string[], problems: string[]): string[] {
  const list = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const pattern of list) {
    if (!/^[\w*]+(\.[\w*]+)*$/.test(pattern)) {
      problems.push(`${name}: ${JSON.stringify(pattern.slice(0, 60))} is not an operationId pattern (e.g. campaign.send, campaign.*, *.delete).`);
      continue;
    }
    const head = pattern.split('.')[0] as string;
    if (head.includes('*') || pattern === '*') continue;
    if (!DOMAIN_NAMES.includes(head)) {
      problems.push(`${name}: ${JSON.stringify(pattern)} names no domain of this API (${DOMAIN_NAMES.join(', ')}).`);
    } else if (head === domain && !operationIds.some((id) => matchesPattern(pattern, id))) {
      problems.push(`${name}: ${JSON.stringify(pattern)} matches no operation of the ${domain} server (${operationIds.join(', ')}).`);
    }
  }
  return list;
}

/**
 * `*` matches any run of characters. Matched without a regex, in linear time: the literal pieces
 * between the stars are found left to right, each at its first place after the one before (the
 * greedy choice is always safe for `*`-only patterns), so `a*a*a*…b` cannot backtrack.
 */
export function matchesPattern(pattern: string, operationId: string): boolean {
  const pieces = pattern.split('*');
  if (pieces.length === 1) return pattern === operationId;
  const first = pieces[0] as string;
  const last = pieces[pieces.length - 1] as string;
  if (first.length + last.length > operationId.length || !operationId.startsWith(first) || !operationId.endsWith(last)) return false;
  let at = first.length;
  const end = operationId.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = operationId.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/** Is this operation offered, given read-only mode and the allow and deny lists? Deny wins. */
export function isOperationEnabled(config: Pick<Config, 'readOnly' | 'allow' | 'deny'>, operationId: string, isWrite: boolean): boolean {
  if (isWrite && config.readOnly) return false;
  if (config.deny.some((pattern) => matchesPattern(pattern, operationId))) return false;
  if (config.allow && !config.allow.some((pattern) => matchesPattern(pattern, operationId))) return false;
  return true;
}
