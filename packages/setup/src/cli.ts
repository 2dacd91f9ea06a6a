#!/usr/bin/env node
// engage-mcp-setup: adds the engage-mcp servers to a host's config file. It asks which host,
// which servers, the API's address and the key (read with echo off), then merges the entries in the
// host's own shape, keeping a backup and every other entry. Flags answer the questions for
// scripts. The key is never printed and never taken on the command line, where other users and
// the shell's history would see it. The guardrails (caps, quiet hours, where state is kept) are
// optional flags only, checked by the servers' own rules and written into every server's env.
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DOMAIN_NAMES, loadConfig } from '@engage-mcp/shared/config';
import { ConfigRefused } from './config-error.js';
import { disabledNotes, shadowedNotes } from './disabled.js';
import { nearNameNotes } from './near-names.js';
import { missingFolderNote } from './new-folder.js';
import { otherServerNotes } from './other-servers.js';
import { prefixCopyNotes } from './prefix-copies.js';
import { KEPT_BACKUPS, keepToOwner, mergeIntoConfig, readConfig, type Written } from './files.js';
import { HOST_IDS, HOSTS, currentEnvironment, launchCommand, VSCODE_KEY_INPUT, type Host, type ServerEntry } from './hosts.js';
import { mergeJsonConfig } from './json-config.js';
import { removeJsonServers } from './json-remove.js';
import { parseHostJson } from './jsonc.js';
import { gitWorkTreeOf, KEY_VARIABLE, keyPlacement } from './key-placement.js';
import { ask, askHidden, Cancelled } from './prompt.js';
import { printable, shown } from './shown.js';
import { sudoNotes } from './sudo.js';
import { mergeTomlConfig, removeTomlServers, scanToml, serverNames } from './toml-config.js';

const KEY_PLACEHOLDER = '<your tenant API key>';
const BASE_URL_PLACEHOLDER = 'https://<your API base address>';

/** The guardrails: optional flags, each written as its variable into every server's env (the servers' defaults otherwise). */
const GUARDRAILS = [
  { flag: 'cap-recipients-per-send', env: 'ENGAGE_CAP_RECIPIENTS_PER_SEND', value: 'N', help: 'refuse a campaign send to more than N recipients' },
  { flag: 'cap-messages-per-day', env: 'ENGAGE_CAP_MESSAGES_PER_DAY', value: 'N', help: 'at most N messages a local day, all sends together' },
  { flag: 'quiet-hours', env: 'ENGAGE_QUIET_HOURS', value: 'HH:MM-HH:MM', help: 'refuse sends in this daily window (21:00-08:00)' },
  { flag: 'timezone', env: 'ENGAGE_TIMEZONE', value: 'ZONE', help: 'IANA zone of the quiet hours and the day (default UTC)' },
  { flag: 'state-dir', env: 'ENGAGE_STATE_DIR', value: 'DIR', help: 'absolute folder for counters and the audit record' },
  { flag: 'audit-log', env: 'ENGAGE_AUDIT_LOG', value: 'FILE', help: 'absolute path of the audit record' },
] as const;

type GuardrailFlag = (typeof GUARDRAILS)[number]['flag'];

const HELP = `Usage: npx @engage-mcp/setup [flags]

Adds the engage-mcp servers to an MCP host's config file, keeping a backup of it.
Without flags it asks; in a script, give every answer:

  --host NAME         ${HOST_IDS.join(', ')}
  --servers LIST      all, or a comma list of ${DOMAIN_NAMES.join(', ')}
  --base-url URL      the API's base address (https)
  --key-env NAME      read the API key from the environment variable NAME
  --key-stdin         read the API key from the first line of standard input
  --config-path FILE  write this file instead of the host's usual one
                      (e.g. a project's .mcp.json for Claude Code); the key itself
                      goes only into the host's usual file, outside any git work tree:
                      elsewhere the entries name $ENGAGE_API_KEY instead
  --print             print the entries (key hidden) instead of writing them; with
                      --config-path, as a write to that file would give them
  --yes               write without asking for confirmation
  --remove            take the servers out of the host's file instead: those of
                      --servers (else all seven), their engage-<name> entries (and
                      VS Code's key input once no entry names it), keeping a backup
                      of the file and all the rest of it
  --help, -h          this text

Optional guardrails, the same in every server added. A flag left out keeps what an earlier
run wrote (else the server's default holds); to remove a setting, delete it from the entries' env:

${GUARDRAILS.map(({ flag, value, help }) => `  --${`${flag} ${value}`.padEnd(27)}${help}`).join('\n')}

The key is never taken as a flag's value: command lines are visible to other programs.
VS Code keeps the key itself: it asks for it once, when a server first starts.`;

class UsageError extends Error {}

interface Options extends Partial<Record<GuardrailFlag, string>> {
  host?: string;
  servers?: string;
  'base-url'?: string;
  'key-env'?: string;
  'key-stdin'?: boolean;
  'config-path'?: string;
  print?: boolean;
  yes?: boolean;
  remove?: boolean;
  help?: boolean;
}

function parseOptions(argv: string[]): Options {
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        servers: { type: 'string' },
        'base-url': { type: 'string' },
        'key-env': { type: 'string' },
        'key-stdin': { type: 'boolean' },
        'config-path': { type: 'string' },
        print: { type: 'boolean' },
        yes: { type: 'boolean' },
        remove: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(GUARDRAILS.map(({ flag }) => [flag, { type: 'string' as const }])),
      },
    }).values as Options;
  } catch (error) {
    throw new UsageError(argumentProblem(error as NodeJS.ErrnoException));
  }
}

const FLAGS = ['host', 'servers', 'base-url', 'key-env', 'key-stdin', 'config-path', 'print', 'yes', 'remove', 'help', ...GUARDRAILS.map(({ flag }) => flag)];

const KEY_FROM = 'give it with --key-stdin (printf \'%s\\n\' "$KEY" | npx @engage-mcp/setup … --key-stdin) or --key-env NAME';

/**
 * parseArgs' refusal, for the person: a word without a flag is not repeated (a key pasted there
 * would be printed again, into a terminal or a CI log), a key flag says where the key comes from,
 * and a misspelt flag names the one meant.
 */
function argumentProblem(error: NodeJS.ErrnoException): string {
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const word = /'(.*)'/s.exec(error.message)?.[1] ?? '';
    const host = HOST_IDS.find((id) => squeezed(id) === squeezed(word) || squeezed(HOSTS[id].name) === squeezed(word));
    if (host) return `every answer is given with its flag: --host ${host}, not ${host} alone.`;
    return `a word was given without a flag before it (not shown: it may be the key). Every answer is given with its flag; the API key never is: ${KEY_FROM}.`;
  }
  if (error.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return error.message;
  const given = /'-*([^']*)'/.exec(error.message)?.[1] ?? '';
  if (!nameLike(given))
    return `a flag setup does not know was given (not shown: it may be the key, pasted as --<key>). The API key is never taken as a flag's value: ${KEY_FROM}.`;
  const name = given.toLowerCase();
  if (/^(api[-_]?)?(key|token|secret)$/.test(name))
    return `${error.message}. The API key is never taken as a flag's value, where other programs can see it: ${KEY_FROM}.`;
  const meant = FLAGS.find((flag) => flag === name) ?? FLAGS.find((flag) => editDistance(flag, name) <= 2);
  return meant ? `${error.message}. Did you mean --${meant}?` : error.message;
}

/**
 * Whether a word the person gave where a name goes (a flag, a host, a server) reads as one, and so
 * may be repeated in a refusal: the key pasted there would be printed, into a terminal or a CI log.
 * Names are short and of letters, digits, dashes; the API's keys are longer or of other characters.
 */
const nameLike = (word: string) => /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,23}$/.test(word);

/** The word as a refusal repeats it: itself when name-like, else a mention of it. */
const repeated = (word: string, as: (word: string) => string = (plain) => plain) => (nameLike(word) ? as(word) : 'one not shown (it may be the key)');

/** How many letters to add, remove or change to turn one word into the other. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length] ?? 0;
}

const interactive = () => process.stdin.isTTY === true;

/**
 * An answer from its flag (one it cannot take ends the run), or from the person at the terminal,
 * asked again, with what was wrong, until it can be taken: a slip costs no earlier answer.
 */
async function answer<T>(flag: string, given: string | undefined, question: string, take: (value: string) => T, asker = ask): Promise<T> {
  if (given !== undefined) return take(given);
  if (!interactive()) throw new UsageError(`--${flag} is needed when no one is at a terminal to ask.`);
  for (;;) {
    const reply = await asker(question, process.stdin, process.stderr);
    try {
      return take(reply);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n`);
    }
  }
}

/** How a host is named, compared: "VS Code", "vs-code" and "vscode" alike. */
const squeezed = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');

/** --config-path as given: a file's path. Empty (--config-path "$FILE" with FILE unset) or ending in a slash, it names none. */
function configPathGiven(value: string | undefined): string | undefined {
  if (value === undefined || (value.trim() !== '' && !/[/\\]$/.test(value))) return value;
  throw new UsageError(
    `--config-path ${JSON.stringify(value)} names no file: give the config file's own path (.mcp.json, say), or leave the flag out for the host's usual file.`,
  );
}

/** The number shown, the id, or the name the question shows ("Cursor", "Gemini CLI"). */
function parseHost(value: string): Host {
  const byNumber = /^\d+$/.test(value) ? HOST_IDS[Number(value) - 1] : undefined;
  const byName = HOST_IDS.find((id) => squeezed(id) === squeezed(value) || squeezed(HOSTS[id].name) === squeezed(value));
  const id = byNumber ?? byName;
  if (!id) throw new UsageError(`unknown host ${repeated(value, (name) => JSON.stringify(name))}: one of ${HOST_IDS.join(', ')}.`);
  return HOSTS[id];
}

/** At the question, an empty answer takes the default shown ([all]). */
const parseServersAnswer = (value: string) => (value.trim() === '' ? [...DOMAIN_NAMES] : parseServers(value));

/**
 * `--servers` as given: `all` or names. An empty flag (`--servers "$LIST"` with LIST unset) or one
 * of commas alone names no server; it is refused rather than taken as all seven.
 */
function parseServers(value: string): string[] {
  if (value.trim().toLowerCase() === 'all') return [...DOMAIN_NAMES];
  const chosen = value
    .split(',')
    .map((name) =>
      name
        .trim()
        .toLowerCase()
        .replace(/^engage-/, ''),
    )
    .filter((name) => name !== '');
  if (chosen.length === 0) throw new UsageError(`${JSON.stringify(value)} names no server: give all, or a comma list of ${DOMAIN_NAMES.join(', ')}.`);
  const unknown = chosen.filter((name) => !DOMAIN_NAMES.includes(name));
  if (unknown.length > 0) {
    const meant = unknown.map((name) => DOMAIN_NAMES.find((domain) => editDistance(domain, name) <= 2)).filter((name) => name !== undefined);
    const guess = meant.length === unknown.length ? ` (did you mean ${meant.join(', ')}?)` : '';
    throw new UsageError(`unknown server ${unknown.map((name) => repeated(name)).join(', ')}${guess}: choose from ${DOMAIN_NAMES.join(', ')}, or all.`);
  }
  return DOMAIN_NAMES.filter((name) => chosen.includes(name));
}

/** The same checks the servers make at start, so a mistake shows now rather than in the host. */
function checkSettings(key: string | undefined, baseUrl: string | undefined): void {
  const env = { ENGAGE_API_KEY: key ?? 'placeholder', ENGAGE_BASE_URL: baseUrl ?? 'https://placeholder.invalid' };
  const result = loadConfig(env, DOMAIN_NAMES[0] as string, []);
  if (!result.ok) throw new UsageError(result.problems.join(' '));
}

/**
 * The guardrail variables the flags give, checked by the servers' own rules (so a mistake shows
 * now, not as a refusal in the host), each problem named by the flag that caused it.
 */
function guardrailSettings(options: Options): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const { flag, env, value } of GUARDRAILS) {
    const given = options[flag]?.trim();
    if (given === undefined) continue;
    if (given === '')
      throw new UsageError(
        `--${flag}: a value is needed (${value}). Left out, the flag keeps what an earlier run wrote (else the server's default holds); to remove ${env}, delete it from the entries' env.`,
      );
    settings[env] = given;
  }
  const result = loadConfig({ ENGAGE_API_KEY: 'placeholder', ENGAGE_BASE_URL: 'https://placeholder.invalid', ...settings }, DOMAIN_NAMES[0] as string, []);
  if (result.ok) return settings;
  const byFlag = (problem: string) => {
    const guardrail = GUARDRAILS.find(({ env }) => problem.startsWith(`${env} `));
    return guardrail ? `--${guardrail.flag}: ${problem}` : problem;
  };
  throw new UsageError(result.problems.map(byFlag).join(' '));
}

/** The key, from the flag's source or typed at the terminal (asked again until `check` takes it). */
async function readKey(options: Options, check: (key: string) => void): Promise<string> {
  if (options['key-env'] !== undefined) {
    const value = process.env[options['key-env']];
    if (!value) throw new UsageError(keyEnvUnset(options['key-env']));
    check(value.trim());
    return value.trim();
  }
  if (options['key-stdin'] && !interactive()) {
    let text = '';
    for await (const chunk of process.stdin) text += chunk;
    const key = text.split(/\r?\n/)[0]?.trim() ?? '';
    if (!key) throw new UsageError('--key-stdin: standard input held no key.');
    check(key);
    return key;
  }
  if (!interactive()) throw new UsageError('the API key is needed: give it with --key-stdin or --key-env NAME.');
  return answer(
    'key-stdin',
    undefined,
    'API key (not shown as you type or paste): ',
    (typed) => {
      const key = typed.trim();
      if (!key) throw new UsageError('no API key was given.');
      check(key);
      return key;
    },
    askHidden,
  );
}

/**
 * --key-env NAME naming no set variable. The name is repeated only when it is spelled as variables
 * are (ENGAGE_KEY): `--key-env "$ENGAGE_KEY"` gives the key itself, which is not printed again.
 */
function keyEnvUnset(name: string): string {
  const exported = (shownName: string) => `exported (export ${shownName}=…) in the shell that runs setup, then run again`;
  if (/^[A-Z_][A-Z0-9_]{0,31}$/.test(name)) return `--key-env ${name}: that environment variable is not set; it must be ${exported(name)}.`;
  return (
    '--key-env takes the name of an environment variable that holds the key (ENGAGE_KEY, say), and no variable of the name given is set ' +
    `(not shown: it may be the key itself, as with --key-env "$ENGAGE_KEY"; then give --key-env ENGAGE_KEY). The variable must be ${exported('ENGAGE_KEY')}.`
  );
}

function entriesFor(
  host: Host,
  servers: string[],
  key: KeyToWrite,
  baseUrl: string,
  guardrails: Record<string, string>,
  path?: string,
): Record<string, ServerEntry> {
  const environment = currentEnvironment();
  // The host's own per-user file (or a snippet for it); a file named by --config-path elsewhere is shared.
  const ownFile = path === undefined || path === host.configPath(environment);
  // A key passed on by name is not in env at all: the host takes it from its own environment.
  const keyEntry: Pick<ServerEntry, 'envVars'> = key.forward ? { envVars: [KEY_VARIABLE] } : {};
  const keyEnv: Record<string, string> = key.forward ? {} : { ENGAGE_API_KEY: key.key };
  return Object.fromEntries(
    servers.map((domain) => [
      `engage-${domain}`,
      { ...launchCommand(host, `@engage-mcp/${domain}`, environment, { ownFile }), ...keyEntry, env: { ...keyEnv, ENGAGE_BASE_URL: baseUrl, ...guardrails } },
    ]),
  );
}

/** A UTF-8 byte order mark (Notepad, PowerShell 5): neither parser takes one, so the text after it is merged and the mark kept. */
const BOM = '\uFEFF';

function render(host: Host, existing: string | undefined, entries: Record<string, ServerEntry>, path: string): string {
  const bom = existing?.startsWith(BOM) ? BOM : '';
  const text = bom ? existing?.slice(bom.length) : existing;
  try {
    if (host.format === 'toml') return bom + mergeTomlConfig(text, entries, path);
    const shaped = Object.fromEntries(Object.entries(entries).map(([name, entry]) => [name, host.shape(entry)]));
    return bom + mergeJsonConfig(text, host, shaped, path);
  } catch (error) {
    // Reading and writing back are recursive: a file nested some thousands deep ends them.
    if (!(error instanceof RangeError)) throw error;
    throw new ConfigRefused(
      `${path} nests its values too deeply to be read safely; nothing was changed. Add the servers by hand: run again with --print for the snippet.`,
    );
  }
}

/**
 * What writing `entries` does to each server, for the person: added, the settings it changes (by
 * name only: a value may be the key), or unchanged. Each setting is merged on its own into the file
 * as it is and compared with a merge of no server (which holds setup's other edits, VS Code's key
 * input), so the answer is the merge's own, in either format.
 */
function changesOf(host: Host, existing: string | undefined, entries: Record<string, ServerEntry>, path: string): string[] {
  const baseline = render(host, existing, {}, path);
  const servers = Object.entries(entries).map(([name, entry]) => {
    const changes = (probe: ServerEntry) => render(host, existing, { [name]: probe }, path) !== baseline;
    if (!changes(entry)) return `${name}: unchanged`;
    if (!hasServer(host, existing, name)) return `${name}: added`;
    const command = changes({ ...entry, env: {} }) ? ['its command'] : [];
    // Each setting against the entry with its new command already, so a new command is not counted in every setting.
    const commandOnly = render(host, existing, { [name]: { ...entry, env: {} } }, path);
    const settings = Object.entries(entry.env).filter(
      ([variable, value]) => render(host, existing, { [name]: { ...entry, env: { [variable]: value } } }, path) !== commandOnly,
    );
    const changed = [...command, ...settings.map(([variable]) => variable)];
    return `${name}: ${changed.length > 0 ? changed.join(', ') : 'its entry'} changed`;
  });
  const input =
    host.asksForKey && inputsOf(host, baseline) !== inputsOf(host, existing)
      ? [`the input ${VSCODE_KEY_INPUT.id} (VS Code asks for the key with it): set`]
      : [];
  return [...servers, ...input];
}

/** VS Code's inputs as JSON text, to compare (`text` merged once already, so it parses). */
function inputsOf(host: Host, text: string | undefined): string {
  const json = text?.startsWith(BOM) ? text.slice(BOM.length) : (text ?? '');
  return json.trim() === '' ? '' : JSON.stringify((parseHostJson(host, json) as Record<string, unknown> | null)?.inputs);
}

/** Whether the file has an entry of this name (`existing` merged once already, so it parses). */
function hasServer(host: Host, existing: string | undefined, name: string): boolean {
  const text = existing?.startsWith(BOM) ? existing.slice(BOM.length) : (existing ?? '');
  if (text.trim() === '') return false;
  if (host.format === 'toml')
    return scanToml(text).some((statement) => statement.kind === 'header' && statement.keys[0] === 'mcp_servers' && statement.keys[1] === name);
  const servers = (parseHostJson(host, text) as Record<string, unknown> | null)?.[host.container];
  return typeof servers === 'object' && servers !== null && Object.hasOwn(servers, name);
}

interface KeyToWrite {
  /** What goes in ENGAGE_API_KEY. */
  key: string;
  /** Whether that is the live key, so the file must be its owner's only. */
  secret: boolean;
  /** The host passes ENGAGE_API_KEY on from its environment by name (env_vars): nothing goes in env. */
  forward?: boolean;
  note?: string;
}

/** The live key, once read: kept out of whatever setup prints (forTerminal). */
let liveKey: string | undefined;

/** Shorter keys are not looked for in what is printed: they would be found inside ordinary words. */
const SHORTEST_KEY_HIDDEN = 8;

/**
 * A message as printed: the live key, as given and as JSON escapes it, shown as KEY_PLACEHOLDER
 * (messages quote names from the file, a project's path, a key in our entry, a TOML table, and a
 * file may hold the key in one of those too; what is printed may end up in a screenshot or a CI
 * log), and no character that a terminal takes for a command (printable).
 */
function forTerminal(text: string): string {
  if (liveKey === undefined || liveKey.length < SHORTEST_KEY_HIDDEN) return printable(text);
  return printable([liveKey, JSON.stringify(liveKey).slice(1, -1)].reduce((hidden, form) => hidden.split(form).join(KEY_PLACEHOLDER), text));
}

/** A key the host would change as it reads the file: written as it is, the server would send another key. */
function refuseExpanded(host: Host, key: string): void {
  if (!host.expandsInValues?.test(key)) return;
  throw new UsageError(
    `the key holds a $ where ${host.name} reads the name of an environment variable, which it puts in its place as it reads its config (there is no way to keep it as written), ` +
      'so the server would be sent another key; nothing was written. Create another key in the tenant console under API key settings and give that one.',
  );
}

/** The live key only for the host's own per-user file; elsewhere a reference, the key not even asked for. */
async function keyFor(host: Host, path: string, options: Options, check: (key: string) => void): Promise<KeyToWrite> {
  // VS Code asks for the key itself and keeps it in its secret storage; the file only names it.
  if (host.asksForKey) return { key: `\${input:${VSCODE_KEY_INPUT.id}}`, secret: false };
  const placement = await keyPlacement(host, path, host.configPath(currentEnvironment()));
  if (placement.kind === 'key') {
    liveKey = await readKey(options, (key) => {
      check(key);
      refuseExpanded(host, key);
    });
    return { key: liveKey, secret: true };
  }
  if (placement.kind === 'forward') {
    const note =
      `The key is not written into ${path} (it is ${placement.reason}): the entries pass ${KEY_VARIABLE} on by name (env_vars), ` +
      `which ${host.name} takes from the environment it starts in, so set ${KEY_VARIABLE} there.`;
    return { key: '', secret: false, forward: true, note };
  }
  const note =
    `The key is not written into ${path} (it is ${placement.reason}): the entries name ${placement.reference}, ` +
    `which ${host.name} fills from the environment it starts in, so set ${KEY_VARIABLE} there.`;
  return { key: placement.reference, secret: false, note };
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  // Before any question, so a mistyped flag costs no answers.
  const guardrails = guardrailSettings(options);
  const configPath = configPathGiven(options['config-path']);
  if (options.remove) return removeServers(options, configPath);
  const host = await answer(
    'host',
    options.host,
    `Which host?\n${HOST_IDS.map((id, index) => `  ${index + 1}. ${HOSTS[id].name} (${id})`).join('\n')}\nHost: `,
    parseHost,
  );
  const servers =
    options.servers === undefined
      ? await answer('servers', undefined, `Which servers? all, or some of ${DOMAIN_NAMES.join(', ')} [all]: `, parseServersAnswer)
      : parseServers(options.servers);
  if (options.print) return printSnippet(host, servers, options['base-url'], guardrails, configPath);

  const baseUrl = await answer('base-url', options['base-url'], 'API base address (https://…): ', (value) => {
    checkSettings(undefined, value);
    return value;
  });
  const path = configPath ?? host.configPath(currentEnvironment());
  const keyToWrite = await keyFor(host, path, options, (key) => checkSettings(key, baseUrl));
  const existing = await readConfig(path);
  // Looked at before the write makes the folder; a file there already is where the host (or a hand) put it.
  const missingFolder = configPath === undefined && existing === undefined ? missingFolderNote(host, path) : undefined;
  const entries = entriesFor(host, servers, keyToWrite, baseUrl, guardrails, path);
  const merged = render(host, existing, entries, path);
  const unchanged = `${path} already has ${servers.map((domain) => `engage-${domain}`).join(', ')} as given; nothing to change.\n`;
  const notes =
    turnedOffText(host, merged, Object.keys(entries), path === host.configPath(currentEnvironment())) +
    section('Not part of this run:', otherServerNotes(host, merged, entries)) +
    section('Installed in the folder npx is given (remove it, or the host cannot start the server):', prefixCopyNotes(entries)) +
    section('Run with sudo:', configPath === undefined ? sudoNotes(currentEnvironment().home, host.name) : []) +
    section('A new folder:', missingFolder ? [missingFolder] : []);
  if (merged === existing) {
    // Nothing to write, but a file holding the key stays its owner's only, as a written one is made.
    const narrowed = keyToWrite.secret ? await keepToOwner(path) : undefined;
    const modeNote = narrowed === undefined ? '' : `It holds the key and was readable by others (mode ${narrowed}); it is now readable by you only (0600).\n`;
    process.stdout.write(forTerminal(unchanged + modeNote + notes));
    return 0;
  }
  const changes = changesOf(host, existing, entries, path)
    .map((change) => `  ${change}\n`)
    .join('');
  if (!options.yes && !(await approved(path, existing, changes))) {
    process.stdout.write('Nothing was changed.\n');
    return 1;
  }
  const written = await mergeIntoConfig(path, (current) => render(host, current, entries, path), keyToWrite.secret);
  const backupNote = written?.backup ? await backupInWorkTreeNote(written.backup) : undefined;
  const done = written
    ? doneText(host, written, changes, [keyToWrite.note, backupNote, removedBackupsNote(written), hardLinkNote(written), replacedLinkNote(written)])
    : unchanged;
  process.stdout.write(forTerminal(done + notes));
  return 0;
}

/** The flags that say what to write: no part of a removal, which writes nothing of its own. */
const ADDING_ONLY = ['base-url', 'key-env', 'key-stdin', 'print', ...GUARDRAILS.map(({ flag }) => flag)] as const;

/**
 * `--remove`: our servers' entries (those of --servers, else all seven) taken out of the host's
 * file, with the safety of a write: the lock, a backup, links and owners kept, the host's own save
 * merged. Nothing else in the file is touched but VS Code's key input, once no entry names it.
 */
async function removeServers(options: Options, configPath: string | undefined): Promise<number> {
  const adding = ADDING_ONLY.filter((flag) => options[flag] !== undefined);
  if (adding.length > 0)
    throw new UsageError(
      `--remove takes --host, --servers, --config-path and --yes only; ${adding.map((flag) => `--${flag}`).join(', ')} ${adding.length === 1 ? 'is' : 'are'} for adding servers.`,
    );
  const host = await answer(
    'host',
    options.host,
    `Remove the servers from which host?\n${HOST_IDS.map((id, index) => `  ${index + 1}. ${HOSTS[id].name} (${id})`).join('\n')}\nHost: `,
    parseHost,
  );
  const names = (options.servers === undefined ? [...DOMAIN_NAMES] : parseServers(options.servers)).map((domain) => `engage-${domain}`);
  const path = configPath ?? host.configPath(currentEnvironment());
  const existing = await readConfig(path);
  // Refuses a file it could not take them out of (not JSON, say) before anything is asked.
  const after = existing === undefined ? undefined : removed(host, existing, names, path);
  const present = existing === undefined ? [] : names.filter((name) => hasServer(host, existing, name));
  if (existing === undefined || present.length === 0) {
    process.stdout.write(forTerminal(`${path} ${existing === undefined ? 'does not exist' : `has no ${names.join(', ')}`}; nothing to remove.\n`));
    return 0;
  }
  const input = host.asksForKey && inputsOf(host, after) !== inputsOf(host, existing) ? [`the input ${VSCODE_KEY_INPUT.id} (no entry uses it now)`] : [];
  const changes = [...present, ...input].map((name) => `  ${name}: removed\n`).join('');
  if (!options.yes && !(await approved(path, existing, changes, 'Remove them'))) {
    process.stdout.write('Nothing was changed.\n');
    return 1;
  }
  const written = await mergeIntoConfig(path, (current) => removed(host, current, present, path), false);
  if (written === undefined) {
    process.stdout.write(forTerminal(`${path} has no ${present.join(', ')} any more; nothing to remove.\n`));
    return 0;
  }
  const backupNote = written.backup ? await backupInWorkTreeNote(written.backup) : undefined;
  const notes = [backupNote, removedBackupsNote(written), hardLinkNote(written), replacedLinkNote(written)];
  process.stdout.write(
    forTerminal(
      `Removed from ${shown(written.path)}${written.backup ? ` (the previous file is kept as ${shown(written.backup)})` : ''}:\n${changes}` +
        `Restart ${host.name} to stop them.\n${notes.map((note) => (note ? `${note}\n` : '')).join('')}`,
    ),
  );
  return 0;
}

/** The file's text without these entries; a file gone since it was read has none to remove. */
function removed(host: Host, current: string | undefined, names: string[], path: string): string {
  if (current === undefined) throw new ConfigRefused(`${path} was removed while setup ran; nothing was changed.`);
  const bom = current.startsWith(BOM) ? BOM : '';
  const text = current.slice(bom.length);
  return bom + (host.format === 'toml' ? removeTomlServers(text, names, path) : removeJsonServers(text, host, names, path));
}

/**
 * The servers the file keeps turned off (the person's choice, kept), each with how to turn it on,
 * and those a project runs its own entry of instead; empty for none.
 */
function turnedOffText(host: Host, text: string, servers: string[], usualFile: boolean): string {
  return (
    section('Turned off in the file (your setting, kept):', disabledNotes(host, text, servers, usualFile)) +
    section('Replaced in some projects (your setting, kept):', shadowedNotes(host, text, servers, usualFile)) +
    section('Also in the file (your entry, kept):', nearNameNotes(serverNamesIn(host, text), servers, host.name))
  );
}

/** Notes under a title, one a line; empty for none. */
const section = (title: string, notes: string[]) => (notes.length === 0 ? '' : `${title}\n${notes.map((note) => `  ${note}\n`).join('')}`);

/** The names of the servers in a config as setup writes it (valid: it has just been merged). */
function serverNamesIn(host: Host, text: string): string[] {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') return [];
  if (host.format === 'toml') return serverNames(scanToml(body));
  const servers = (parseHostJson(host, body) as Record<string, unknown> | null)?.[host.container];
  return typeof servers === 'object' && servers !== null && !Array.isArray(servers) ? Object.keys(servers) : [];
}

/**
 * `--print`: a snippet to paste; the key is never in it, whatever was given. With --config-path,
 * what writing that file would put there: for a project's shared file, no one person's home for
 * npx and the key named as the host reads it from the environment.
 */
async function printSnippet(host: Host, servers: string[], baseUrl: string | undefined, guardrails: Record<string, string>, path?: string): Promise<number> {
  checkSettings(undefined, baseUrl);
  const key = path === undefined ? { key: KEY_PLACEHOLDER, secret: false } : await snippetKey(host, path);
  const entries = entriesFor(host, servers, key, baseUrl ?? BASE_URL_PLACEHOLDER, guardrails, path);
  process.stdout.write(render(host, undefined, entries, '(snippet)'));
  return 0;
}

/** ENGAGE_API_KEY as a write to `path` would give it, with the placeholder where the key itself would go. */
async function snippetKey(host: Host, path: string): Promise<KeyToWrite> {
  const placeholder = { key: KEY_PLACEHOLDER, secret: false };
  // VS Code's entries name its input whatever the file (its shape sets it).
  if (host.asksForKey) return placeholder;
  try {
    const placement = await keyPlacement(host, path, host.configPath(currentEnvironment()));
    if (placement.kind === 'reference') return { key: placement.reference, secret: false };
    if (placement.kind === 'forward') return { key: '', secret: false, forward: true };
    return placeholder;
  } catch (error) {
    // Claude Desktop can name no variable: a write there is refused; the snippet is for a hand to fill.
    if (error instanceof ConfigRefused) return placeholder;
    throw error;
  }
}

/** The person's yes to the changes shown; refused outright where no one can be asked. */
async function approved(path: string, existing: string | undefined, changes: string, question = 'Write this'): Promise<boolean> {
  if (!interactive()) throw new UsageError('add --yes to write the file without being asked.');
  const reply = await ask(
    `${path}${existing === undefined ? ' (a new file)' : ''}:\n${changes}${question}${existing === undefined ? '' : ' (a backup of the file is kept)'}? [Y/n] `,
    process.stdin,
    process.stderr,
  );
  return !/^n/i.test(reply);
}

/** What was written, and what the person does next. */
function doneText(host: Host, written: Written, changes: string, notes: (string | undefined)[]): string {
  return (
    `Wrote ${shown(written.path)}${written.backup ? ` (the previous file is kept as ${shown(written.backup)})` : ''}:\n${changes}` +
    `Restart ${host.name} to load them.${host.asksForKey ? ' It asks for the API key when the first one starts.' : ''}\n` +
    notes.map((note) => (note ? `${note}\n` : '')).join('')
  );
}

/** Older backups removed as the new one was made, so they do not pile up (a backup holds the key too). */
function removedBackupsNote({ removedBackups }: Written): string | undefined {
  if (removedBackups === undefined) return undefined;
  return `${removedBackups === 1 ? '1 older backup of it was' : `${removedBackups} older backups of it were`} removed (setup keeps the newest ${KEPT_BACKUPS}).`;
}

/** The file was replaced under one of its names: the others (a dotfiles folder's hard link) keep the old text. */
function hardLinkNote({ path, otherNames }: Written): string | undefined {
  if (otherNames === undefined) return undefined;
  return (
    `${shown(path)} had ${otherNames === 1 ? 'another name' : `${otherNames} other names`} (a hard link, as some dotfiles tools make): ` +
    `the new file has this name only, and ${otherNames === 1 ? 'that one keeps' : 'those keep'} the file as it was. ` +
    'Copy the new file there, or make that name a symbolic link to it, if it is to follow.'
  );
}

/** The config was a link to no file (a dotfiles link whose file is gone or not made yet): the new file took the link's place. */
function replacedLinkNote({ path, replacedLinkTo }: Written): string | undefined {
  if (replacedLinkTo === undefined) return undefined;
  return (
    `${shown(path)} was a symbolic link to ${shown(replacedLinkTo)}, where there was no file: the new file replaced the link, and nothing was made there. ` +
    'If the file is to be kept there (a dotfiles folder), move it there and make the link again.'
  );
}

/**
 * A backup made in a git work tree (a project's .mcp.json) is a new file there, which `git add -A`
 * takes in: it holds the file as it was, a key written in it by hand too, even where setup has just
 * put a reference in the key's place.
 */
async function backupInWorkTreeNote(backup: string): Promise<string | undefined> {
  const workTree = await gitWorkTreeOf(dirname(backup));
  if (workTree === undefined) return undefined;
  return (
    `The backup is inside the git work tree ${shown(workTree)}, and holds the file as it was (a key in it too): ` +
    'delete it once the new file works, and keep it out of commits until then.'
  );
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) process.stderr.write(`engage-mcp-setup: ${error.message}\nRun with --help for the flags.\n`);
    else if (error instanceof ConfigRefused) process.stderr.write(forTerminal(`engage-mcp-setup: ${error.message}\n`));
    // Ctrl-C at a question (readline's AbortError) is a cancel too, as at the key's.
    else if (error instanceof Cancelled || (error as NodeJS.ErrnoException).code === 'ABORT_ERR')
      process.stderr.write('engage-mcp-setup: cancelled; nothing was changed.\n');
    else process.stderr.write(forTerminal(`engage-mcp-setup: ${(error as Error).message ?? String(error)}\n`));
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
