// The setup command, run as a user runs it (the built bin), on config files in a temporary home:
// for each host's shape, a merge into a config with other servers and settings, a second run
// that changes nothing, the backup, a malformed file refused and left alone, and the key never
// printed. The TOML merge is also checked against an independent TOML parser.
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { mkdtemp, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { HOSTS, launchCommand, type HostId } from '../packages/setup/src/hosts.js';
import { mergeTomlConfig } from '../packages/setup/src/toml-config.js';
import { askHidden } from '../packages/setup/src/prompt.js';
import { ROOT } from '../scripts/distribution.js';

const CLI = join(ROOT, 'packages', 'setup', 'dist', 'cli.js');
const KEY = 'sk_live_9f2c4e7a1b3d5f8a6c0e';
const OTHER_SECRET = 'other-servers-token-123';
const BASE_URL = 'https://api.example.com';

let home: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-setup-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The bin, with HOME (and every other place a host's config is looked for) in the temporary home. */
function setup(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...options.env };
    const child = spawn(process.execPath, [CLI, ...args], { env, cwd: home, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

const configPath = (host: HostId) => HOSTS[host].configPath({ platform: 'linux', home, env: { XDG_CONFIG_HOME: join(home, '.config') } });

async function backupsOf(path: string): Promise<string[]> {
  const names = await readdir(dirname(path));
  return names.filter((name) => name.startsWith(`${basename(path)}.backup-`)).map((name) => join(dirname(path), name));
}

const writeArgs = (host: HostId, servers = 'contact,campaign') => ['--host', host, '--servers', servers, '--base-url', BASE_URL, '--key-stdin', '--yes'];

function expectNoKeyIn(ran: Ran) {
  expect(ran.stdout + ran.stderr).not.toContain(KEY);
  expect(ran.stdout + ran.stderr).not.toContain(OTHER_SECRET);
}

const JSON_HOSTS: HostId[] = ['claude-desktop', 'claude-code', 'vscode', 'cursor', 'gemini'];

describe.each(JSON_HOSTS)('%s (JSON)', (hostId) => {
  const host = HOSTS[hostId];
  const existing: Record<string, any> = {
    theme: 'dark',
    [host.container]: { other: { command: 'other-server', args: ['--flag'], env: { OTHER_TOKEN: OTHER_SECRET } } },
    ...(host.asksForKey ? { inputs: [{ type: 'promptString', id: 'other-token', password: true }] } : {}),
  };

  it('merges into a config with other servers, keeps a backup, and a second run changes nothing', async () => {
    const path = configPath(hostId);
    await mkdir(dirname(path), { recursive: true });
    // Four-space indentation: the file keeps its own style.
    const original = `${JSON.stringify(existing, null, 4)}\n`;
    await writeFile(path, original);

    const first = await setup(writeArgs(hostId), { stdin: `${KEY}\n` });
    expect(first.code, first.stderr).toBe(0);
    expectNoKeyIn(first);
    const text = await readFile(path, 'utf8');
    expect(text).toMatch(/^\{\n {4}"theme"/);
    const config = JSON.parse(text);
    expect(config.theme).toBe('dark');
    expect(config[host.container].other).toEqual(existing[host.container].other);
    expect(Object.keys(config[host.container])).toEqual(['other', 'engage-contact', 'engage-campaign']);
    const entry = config[host.container]['engage-contact'];
    expect(entry).toMatchObject({ command: 'npx', args: ['--prefix', home, '-y', '@engage-mcp/contact'], env: { ENGAGE_BASE_URL: BASE_URL } });
    if (host.asksForKey) {
      // VS Code: the file names an input that VS Code asks for and keeps; the key is not in it.
      expect(entry.env.ENGAGE_API_KEY).toBe('${input:engage-api-key}');
      expect(config.inputs.map((input: { id: string }) => input.id)).toEqual(['other-token', 'engage-api-key']);
      expect(config.inputs[1]).toMatchObject({ type: 'promptString', password: true });
    } else {
      expect(entry.env.ENGAGE_API_KEY).toBe(KEY);
    }
    if (hostId === 'claude-code' || hostId === 'vscode') expect(entry.type).toBe('stdio');

    const backups = await backupsOf(path);
    expect(backups).toHaveLength(1);
    expect(await readFile(backups[0]!, 'utf8')).toBe(original);

    const second = await setup(writeArgs(hostId), { stdin: `${KEY}\n` });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('nothing to change');
    expectNoKeyIn(second);
    expect(await readFile(path, 'utf8')).toBe(text);
    expect(await backupsOf(path)).toHaveLength(1);
  });

  it('refuses a malformed config with a clear error, leaving it byte for byte', async () => {
    const path = configPath(hostId);
    await mkdir(dirname(path), { recursive: true });
    // A comma missing (a comment and trailing commas are VS Code's to read: test/review43-setup-comments).
    const malformed = `{\n  "${host.container}": { "other": { "env": { "OTHER_TOKEN": "${OTHER_SECRET}" } } }\n  "theme": "dark"\n}\n`;
    await writeFile(path, malformed);
    const ran = await setup(writeArgs(hostId), { stdin: `${KEY}\n` });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is not valid JSON at line 3`);
    expect(ran.stderr).toContain('left as it is');
    expectNoKeyIn(ran);
    expect(await readFile(path, 'utf8')).toBe(malformed);
    expect(await backupsOf(path)).toEqual([]);
  });
});

describe('codex (TOML)', () => {
  const original = [
    '# Codex settings',
    'model = "o3"',
    'instructions = """',
    'Never write [mcp_servers.engage-contact] here; this is a string.',
    '"""',
    '',
    '[mcp_servers.other]',
    'command = "other-server"',
    'args = [',
    '  "--flag", # a comment inside an array',
    ']',
    '',
    '[mcp_servers.other.env]',
    `OTHER_TOKEN = "${OTHER_SECRET}"`,
    '',
    '[profiles.fast]',
    "model = 'o4-mini'",
    '',
  ].join('\n');

  it('adds [mcp_servers.<name>] tables, keeping every other byte, a backup, and a second run changes nothing', async () => {
    const path = configPath('codex');
    expect(path).toBe(join(home, '.codex', 'config.toml'));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, original);

    const first = await setup(writeArgs('codex'), { stdin: `${KEY}\n` });
    expect(first.code, first.stderr).toBe(0);
    expectNoKeyIn(first);
    const text = await readFile(path, 'utf8');
    expect(text.startsWith(original)).toBe(true);
    const before = parseToml(original) as Record<string, any>;
    const after = parseToml(text) as Record<string, any>;
    expect(after.model).toBe('o3');
    expect(after.profiles).toEqual(before.profiles);
    expect(after.mcp_servers.other).toEqual(before.mcp_servers.other);
    expect(after.mcp_servers['engage-contact']).toEqual({
      command: 'npx',
      args: ['--prefix', home, '-y', '@engage-mcp/contact'],
      env: { ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL },
    });
    expect(after.mcp_servers['engage-campaign'].args).toEqual(['--prefix', home, '-y', '@engage-mcp/campaign']);

    const backups = await backupsOf(path);
    expect(backups).toHaveLength(1);
    expect(await readFile(backups[0]!, 'utf8')).toBe(original);

    const second = await setup(writeArgs('codex'), { stdin: `${KEY}\n` });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('nothing to change');
    expect(await readFile(path, 'utf8')).toBe(text);
    expect(await backupsOf(path)).toHaveLength(1);
  });

  it('updates our tables in place, keeping keys a user added to them', () => {
    const existing = [
      '[mcp_servers.engage-contact]',
      'command = "node"',
      'startup_timeout_sec = 30',
      '',
      '[mcp_servers."engage-contact".env]',
      'ENGAGE_CONFIRM = "all"',
      "ENGAGE_BASE_URL = 'https://old.example.com'",
      '',
      '# about the next table',
      '[other]',
      'x = 1',
    ].join('\r\n');
    const merged = mergeTomlConfig(
      existing,
      { 'engage-contact': { command: 'npx', args: ['-y', '@engage-mcp/contact'], env: { ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL } } },
      'config.toml',
    );
    expect(parseToml(merged)).toEqual({
      mcp_servers: {
        'engage-contact': {
          command: 'npx',
          args: ['-y', '@engage-mcp/contact'],
          startup_timeout_sec: 30,
          env: { ENGAGE_CONFIRM: 'all', ENGAGE_BASE_URL: BASE_URL, ENGAGE_API_KEY: KEY },
        },
      },
      other: { x: 1 },
    });
    expect(merged).toContain('\r\n# about the next table\r\n[other]\r\nx = 1');
    expect(merged).not.toMatch(/[^\r]\n/);
  });

  it('keeps a comment after a value it rewrites, and the line endings, a multi-line array included', () => {
    const existing = [
      '[mcp_servers.engage-contact]',
      'command = "node"   # the old launcher',
      'args = [',
      '  "old.js",',
      ']  # one file',
      '',
      '[mcp_servers.engage-contact.env]',
      "ENGAGE_BASE_URL = 'https://old.example.com' # staging",
    ].join('\n');
    const merged = mergeTomlConfig(
      existing,
      { 'engage-contact': { command: 'npx', args: ['-y', '@engage-mcp/contact'], env: { ENGAGE_BASE_URL: BASE_URL } } },
      'config.toml',
    );
    expect(merged).toContain('command = "npx"   # the old launcher\n');
    expect(merged).toContain('args = ["-y", "@engage-mcp/contact"]  # one file\n');
    expect(merged).toMatch(/ENGAGE_BASE_URL = "[^"]+" # staging$/);
    expect((parseToml(merged) as Record<string, any>).mcp_servers['engage-contact']).toEqual({
      command: 'npx',
      args: ['-y', '@engage-mcp/contact'],
      env: { ENGAGE_BASE_URL: BASE_URL },
    });
  });

  it.each([
    ['an unclosed string', 'model = "o3\n'],
    ['an unclosed multi-line string', 'instructions = """\nnever closed\n'],
    ['an unclosed table header', '[mcp_servers.other\ncommand = "x"\n'],
    ['a stray value', 'model = "o3" "o4"\n'],
  ])('refuses a file it cannot read safely (%s), leaving it byte for byte', async (_, content) => {
    const path = configPath('codex');
    await mkdir(dirname(path), { recursive: true });
    const malformed = `OTHER_TOKEN = "${OTHER_SECRET}"\n${content}`;
    await writeFile(path, malformed);
    const ran = await setup(writeArgs('codex'), { stdin: `${KEY}\n` });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(new RegExp(`${path.replace(/[.]/g, '\\.')} could not be read safely as TOML \\(line \\d+: `));
    expectNoKeyIn(ran);
    expect(await readFile(path, 'utf8')).toBe(malformed);
    expect(await backupsOf(path)).toEqual([]);
  });

  it.each([
    ['an inline table', '[mcp_servers]\nengage-contact = { command = "x" }\n'],
    ['dotted keys at the top', 'mcp_servers.engage-contact.command = "x"\n'],
    ['an inline env', '[mcp_servers.engage-contact]\nenv = { A = "b" }\n'],
    ['array tables', '[[mcp_servers]]\nname = "x"\n'],
  ])('refuses our servers written as %s, a form it does not edit', (_, content) => {
    expect(() => mergeTomlConfig(content, { 'engage-contact': { command: 'npx', args: [], env: {} } }, 'config.toml')).toThrow(
      /a form this setup does not edit/,
    );
  });

  it('creates a missing config, readable by its owner only', async () => {
    const ran = await setup(writeArgs('codex', 'all'), { stdin: `${KEY}\n`, env: { CODEX_HOME: join(home, 'codex-home') } });
    expect(ran.code, ran.stderr).toBe(0);
    const path = join(home, 'codex-home', 'config.toml');
    const config = parseToml(await readFile(path, 'utf8')) as Record<string, any>;
    expect(Object.keys(config.mcp_servers)).toHaveLength(7);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await backupsOf(path)).toEqual([]);
  });
});

// The guardrails (issue 21), as optional flags written into every server's env, checked with the servers' own rules.
describe('guardrail flags', () => {
  const GUARDRAIL_ENV = {
    ENGAGE_CAP_RECIPIENTS_PER_SEND: '500',
    ENGAGE_CAP_MESSAGES_PER_DAY: '2000',
    ENGAGE_QUIET_HOURS: '21:00-08:00',
    ENGAGE_TIMEZONE: 'Asia/Jakarta',
    ENGAGE_STATE_DIR: '/var/lib/engage-mcp',
    ENGAGE_AUDIT_LOG: '/var/log/engage-mcp/audit.jsonl',
  };
  const GUARDRAIL_FLAGS = Object.entries({
    '--cap-recipients-per-send': '500',
    '--cap-messages-per-day': '2000',
    '--quiet-hours': '21:00-08:00',
    '--timezone': 'Asia/Jakarta',
    '--state-dir': '/var/lib/engage-mcp',
    '--audit-log': '/var/log/engage-mcp/audit.jsonl',
  }).flat();

  it('writes them into the env of each server added to a JSON host', async () => {
    const ran = await setup([...writeArgs('claude-code'), ...GUARDRAIL_FLAGS], { stdin: `${KEY}\n` });
    expect(ran.code, ran.stderr).toBe(0);
    expectNoKeyIn(ran);
    const servers = JSON.parse(await readFile(configPath('claude-code'), 'utf8')).mcpServers;
    for (const name of ['engage-contact', 'engage-campaign']) {
      expect(servers[name].env).toEqual({ ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL, ...GUARDRAIL_ENV });
    }
  });

  it('writes them into the env tables of Codex (TOML)', async () => {
    const ran = await setup([...writeArgs('codex'), ...GUARDRAIL_FLAGS], { stdin: `${KEY}\n` });
    expect(ran.code, ran.stderr).toBe(0);
    const config = parseToml(await readFile(configPath('codex'), 'utf8')) as Record<string, any>;
    for (const name of ['engage-contact', 'engage-campaign']) {
      expect(config.mcp_servers[name].env).toEqual({ ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL, ...GUARDRAIL_ENV });
    }
  });

  it('writes only the ones given, and a later run with a new value replaces just that one', async () => {
    const first = await setup([...writeArgs('cursor', 'inbox'), '--quiet-hours', '22:30-07:00', '--timezone', 'Europe/Berlin'], { stdin: `${KEY}\n` });
    expect(first.code, first.stderr).toBe(0);
    const second = await setup([...writeArgs('cursor', 'inbox'), '--quiet-hours', '20:00-09:00'], { stdin: `${KEY}\n` });
    expect(second.code, second.stderr).toBe(0);
    const env = JSON.parse(await readFile(configPath('cursor'), 'utf8')).mcpServers['engage-inbox'].env;
    expect(env).toEqual({ ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL, ENGAGE_QUIET_HOURS: '20:00-09:00', ENGAGE_TIMEZONE: 'Europe/Berlin' });
  });

  it('shows them in the --print snippet', async () => {
    const ran = await setup(['--print', '--host', 'gemini', '--servers', 'channel', '--base-url', BASE_URL, ...GUARDRAIL_FLAGS]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout).mcpServers['engage-channel'].env).toEqual({
      ENGAGE_API_KEY: '<your tenant API key>',
      ENGAGE_BASE_URL: BASE_URL,
      ...GUARDRAIL_ENV,
    });
    expect(await readdir(home)).toEqual([]);
  });

  it.each([
    ['--cap-recipients-per-send', '0x10', 'ENGAGE_CAP_RECIPIENTS_PER_SEND must be a whole number from 0 to 10000000 (got "0x10")'],
    ['--cap-recipients-per-send', '1.5', 'ENGAGE_CAP_RECIPIENTS_PER_SEND must be a whole number'],
    ['--cap-messages-per-day', 'lots', 'ENGAGE_CAP_MESSAGES_PER_DAY must be a whole number from 0 to 10000000 (got "lots")'],
    ['--cap-messages-per-day', '10000001', 'ENGAGE_CAP_MESSAGES_PER_DAY must be a whole number'],
    ['--quiet-hours', '9pm-8am', 'ENGAGE_QUIET_HOURS must be a window HH:MM-HH:MM'],
    ['--quiet-hours', '21:00-21:00', 'ENGAGE_QUIET_HOURS must be a window HH:MM-HH:MM'],
    ['--quiet-hours', '24:00-08:00', 'ENGAGE_QUIET_HOURS must be a window HH:MM-HH:MM'],
    ['--timezone', 'Mars/Olympus_Mons', 'ENGAGE_TIMEZONE must be an IANA time zone such as Asia/Jakarta (got "Mars/Olympus_Mons")'],
    ['--state-dir', 'state/engage', 'ENGAGE_STATE_DIR must be an absolute path (got "state/engage")'],
    ['--audit-log', 'audit.jsonl', 'ENGAGE_AUDIT_LOG must be an absolute path (got "audit.jsonl")'],
    ['--quiet-hours', ' ', 'a value is needed (HH:MM-HH:MM)'],
  ])('refuses %s %j with the reason, and writes nothing', async (flag, value, message) => {
    for (const hostId of ['claude-desktop', 'codex'] as const) {
      const ran = await setup([...writeArgs(hostId), flag, value], { stdin: `${KEY}\n` });
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(`engage-mcp-setup: ${flag}: `);
      expect(ran.stderr).toContain(message);
      expectNoKeyIn(ran);
      expect(await readdir(home)).toEqual([]);
    }
  });

  it('refuses a bad value before touching an existing config, which stays byte for byte', async () => {
    const path = configPath('codex');
    await mkdir(dirname(path), { recursive: true });
    const original = '[mcp_servers.engage-contact]\ncommand = "npx"\n\n[mcp_servers.engage-contact.env]\nENGAGE_QUIET_HOURS = "21:00-08:00"\n';
    await writeFile(path, original);
    const ran = await setup([...writeArgs('codex', 'contact'), '--quiet-hours', '25:00-08:00', '--timezone', 'Asia/Jakarta'], { stdin: `${KEY}\n` });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('--quiet-hours: ENGAGE_QUIET_HOURS must be a window HH:MM-HH:MM');
    expect(await readFile(path, 'utf8')).toBe(original);
    expect(await backupsOf(path)).toEqual([]);
  });
});

describe('flags and answers', () => {
  it('--print shows the entries with the key hidden, even when a key was given, and writes nothing', async () => {
    const ran = await setup(['--print', '--host', 'claude-desktop', '--servers', 'tenant', '--base-url', BASE_URL, '--key-stdin'], { stdin: `${KEY}\n` });
    expect(ran.code, ran.stderr).toBe(0);
    expectNoKeyIn(ran);
    expect(JSON.parse(ran.stdout)).toEqual({
      mcpServers: {
        'engage-tenant': {
          command: 'npx',
          args: ['--prefix', home, '-y', '@engage-mcp/tenant'],
          env: { ENGAGE_API_KEY: '<your tenant API key>', ENGAGE_BASE_URL: BASE_URL },
        },
      },
    });
    expect(await readdir(home)).toEqual([]);
  });

  it('reads the key from a named environment variable', async () => {
    const ran = await setup(['--host', 'cursor', '--servers', 'billing', '--base-url', BASE_URL, '--key-env', 'MY_ENGAGE_KEY', '--yes'], {
      env: { MY_ENGAGE_KEY: KEY },
    });
    expect(ran.code, ran.stderr).toBe(0);
    expectNoKeyIn(ran);
    expect(JSON.parse(await readFile(configPath('cursor'), 'utf8')).mcpServers['engage-billing'].env.ENGAGE_API_KEY).toBe(KEY);
  });

  it.each([
    [['--servers', 'all', '--base-url', BASE_URL, '--key-stdin', '--yes'], '--host is needed'],
    [['--host', 'cursor', '--servers', 'contact', '--base-url', BASE_URL, '--yes'], '--key-stdin or --key-env'],
    [['--host', 'cursor', '--servers', 'contact', '--base-url', BASE_URL, '--key-stdin'], 'add --yes'],
    [['--host', 'cursor', '--servers', 'contact', '--base-url', 'http://api.example.com', '--key-stdin', '--yes'], 'ENGAGE_BASE_URL must use https'],
    [['--host', 'atom', '--servers', 'contact'], 'unknown host "atom"'],
    [['--host', 'cursor', '--servers', 'contact,mail'], 'unknown server mail'],
    [['--host', 'cursor', '--key', KEY], "Unknown option '--key'"],
  ])('without what it needs, says which flag and writes nothing: %j', async (args, message) => {
    const ran = await setup(args, { stdin: `${KEY}\n` });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(message);
    expect(ran.stdout + ran.stderr.replace(`'--key'`, '')).not.toContain(KEY);
    expect(await readdir(home)).toEqual([]);
  });

  it('keeps fields and variables a user added to our entry', async () => {
    const path = configPath('claude-desktop');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(
      path,
      JSON.stringify({
        mcpServers: { 'engage-contact': { command: 'node', args: ['old.js'], disabled: false, env: { ENGAGE_CONFIRM: 'all', ENGAGE_API_KEY: 'old' } } },
      }),
    );
    const ran = await setup(writeArgs('claude-desktop', 'contact'), { stdin: `${KEY}\n` });
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(JSON.parse(text).mcpServers['engage-contact']).toEqual({
      command: 'npx',
      args: ['--prefix', home, '-y', '@engage-mcp/contact'],
      disabled: false,
      env: { ENGAGE_CONFIRM: 'all', ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: BASE_URL },
    });
    // The original had no final newline; neither has the new text.
    expect(text.endsWith('}')).toBe(true);
  });

  it('reads the key at a terminal with echo off: nothing of it is written back', async () => {
    const modes: boolean[] = [];
    const terminal = Object.assign(new PassThrough(), { isTTY: true, setRawMode: (raw: boolean) => modes.push(raw) }) as unknown as NodeJS.ReadStream;
    const screen = new PassThrough();
    let shown = '';
    screen.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    const answer = askHidden('API key: ', terminal, screen);
    // Typed with a slip corrected by backspace, then pasted, then Enter.
    terminal.write('sk_x\u007f');
    terminal.write(KEY.slice(3));
    terminal.write('\r');
    expect(await answer).toBe(`sk_${KEY.slice(3)}`);
    expect(shown).toBe('API key: \n');
    expect(modes).toEqual([true, false]);
  });

  it('wraps npx in cmd /c for Claude Code on Windows, where npx is a .cmd shim', () => {
    expect(launchCommand(HOSTS['claude-code'], '@engage-mcp/contact', { platform: 'win32', home: 'C:\\Users\\me' })).toEqual({
      command: 'cmd',
      args: ['/c', 'npx', '-y', '@engage-mcp/contact'],
    });
    expect(launchCommand(HOSTS['claude-desktop'], '@engage-mcp/contact', { platform: 'win32', home: 'C:\\Users\\me' })).toEqual({
      command: 'npx',
      args: ['-y', '@engage-mcp/contact'],
    });
  });

  it("knows each host's config file on each system", () => {
    const mac = { platform: 'darwin' as const, home: '/Users/u', env: {} };
    const windows = { platform: 'win32' as const, home: 'C:\\Users\\u', env: { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' } };
    expect(HOSTS['claude-desktop'].configPath(mac)).toBe('/Users/u/Library/Application Support/Claude/claude_desktop_config.json');
    expect(HOSTS['claude-desktop'].configPath(windows)).toContain(join('C:\\Users\\u\\AppData\\Roaming', 'Claude', 'claude_desktop_config.json'));
    expect(HOSTS.vscode.configPath(mac)).toBe('/Users/u/Library/Application Support/Code/User/mcp.json');
    expect(HOSTS['claude-code'].configPath(mac)).toBe('/Users/u/.claude.json');
    expect(HOSTS.cursor.configPath(mac)).toBe('/Users/u/.cursor/mcp.json');
    expect(HOSTS.gemini.configPath(mac)).toBe('/Users/u/.gemini/settings.json');
    expect(HOSTS.codex.configPath(mac)).toBe('/Users/u/.codex/config.toml');
  });
});
