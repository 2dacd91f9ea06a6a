// The setup command keeps secrets and data safe, each case as a hostile review reproduced it:
// files holding a key are its owner's only, project and shared files never get the live key, a
// file is never rewritten with losses (bytes, numbers, duplicate keys, a read-only file, a run
// racing another), and the hidden prompt reads keys rather than terminal escape sequences.
import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { HOSTS, type HostId } from '../packages/setup/src/hosts.js';
import { askHidden, Cancelled } from '../packages/setup/src/prompt.js';
import { mergeJsonConfig } from '../packages/setup/src/json-config.js';
import { mergeTomlConfig } from '../packages/setup/src/toml-config.js';
import { gitWorkTreeOf, keyPlacement } from '../packages/setup/src/key-placement.js';
import { ROOT } from '../scripts/distribution.js';

const CLI = join(ROOT, 'packages', 'setup', 'dist', 'cli.js');
const KEY = 'sk_live_9f2c4e7a1b3d5f8a6c0e';
const BASE_URL = 'https://api.example.com';

let home: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-setup-safety-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function environment(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
}

/** The built bin, as a user runs it, with every host's config looked for in the temporary home. */
function setup(args: string[], stdin = `${KEY}\n`): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: environment(), cwd: home, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const configPath = (host: HostId) => HOSTS[host].configPath({ platform: 'linux', home, env: { XDG_CONFIG_HOME: join(home, '.config') } });
const writeArgs = (host: HostId, servers = 'contact') => ['--host', host, '--servers', servers, '--base-url', BASE_URL, '--key-stdin', '--yes'];
const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

async function backupsOf(path: string): Promise<string[]> {
  const names = await readdir(dirname(path));
  return names.filter((name) => name.startsWith(`${basename(path)}.backup-`)).map((name) => join(dirname(path), name));
}

async function writeConfig(path: string, text: string | Buffer, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  await chmod(path, mode);
}

describe('permissions', () => {
  it('makes an existing 0644 config it writes the key into 0600, and its backups too', async () => {
    const path = configPath('cursor');
    await writeConfig(path, '{"mcpServers": {"other": {"command": "x", "env": {"TOKEN": "other-secret"}}}}\n');
    const first = await setup(writeArgs('cursor', 'contact'));
    expect(first.code, first.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toContain(KEY);
    expect(await modeOf(path)).toBe(0o600);
    const second = await setup(writeArgs('cursor', 'campaign'));
    expect(second.code, second.stderr).toBe(0);
    const backups = await backupsOf(path);
    expect(backups).toHaveLength(2);
    for (const backup of backups) expect(await modeOf(backup), backup).toBe(0o600);
  });

  it('creates a new JSON config readable by its owner only', async () => {
    const ran = await setup(writeArgs('gemini'));
    expect(ran.code, ran.stderr).toBe(0);
    expect(await modeOf(configPath('gemini'))).toBe(0o600);
  });
});

describe('project and shared files', () => {
  it('writes ${ENGAGE_API_KEY} into a project .mcp.json (--config-path .mcp.json), never the key', async () => {
    const ran = await setup([...writeArgs('claude-code'), '--config-path', '.mcp.json']);
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(join(home, '.mcp.json'), 'utf8');
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text).mcpServers['engage-contact'].env).toEqual({ ENGAGE_API_KEY: '${ENGAGE_API_KEY}', ENGAGE_BASE_URL: BASE_URL });
    // A shared file names no one person's home (npx's --prefix goes only in the host's per-user file).
    expect(JSON.parse(text).mcpServers['engage-contact'].args).toEqual(['-y', '@engage-mcp/contact']);
    expect(ran.stdout).toContain('ENGAGE_API_KEY');
    expect(ran.stdout + ran.stderr).not.toContain(KEY);
  });

  it("writes the host's own env reference into a file inside a git work tree (Cursor: ${env:ENGAGE_API_KEY})", async () => {
    const project = join(home, 'work', 'project');
    await mkdir(join(project, '.git'), { recursive: true });
    const path = join(project, 'sub', '.cursor', 'mcp.json');
    const ran = await setup([...writeArgs('cursor'), '--config-path', path]);
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text).mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe('${env:ENGAGE_API_KEY}');
  });

  it('writes a reference, not the key, into the usual user file when it is inside a git work tree (a dotfiles repo)', async () => {
    await mkdir(join(home, '.git'), { recursive: true });
    const ran = await setup(writeArgs('gemini'));
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(configPath('gemini'), 'utf8');
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text).mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe('${ENGAGE_API_KEY}');
  });

  it("has Codex pass the key on by name in a project's .codex/config.toml (env_vars), never writing it", async () => {
    const project = join(home, 'work', 'codex-project');
    await mkdir(join(project, '.git'), { recursive: true });
    const path = join(project, '.codex', 'config.toml');
    const ran = await setup([...writeArgs('codex'), '--config-path', path], '');
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain(KEY);
    const server = (parseToml(text) as any).mcp_servers['engage-contact'];
    expect(server.env_vars).toEqual(['ENGAGE_API_KEY']);
    expect(server.env).toEqual({ ENGAGE_BASE_URL: BASE_URL });
    expect(ran.stdout).toMatch(/pass ENGAGE_API_KEY on by name \(env_vars\)/);
    expect(ran.stdout + ran.stderr).not.toContain(KEY);
    // A second run changes nothing.
    const again = await setup([...writeArgs('codex'), '--config-path', path], '');
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toBe(text);
  });

  it('refuses a Codex project file that already sets ENGAGE_API_KEY in our env table, leaving it as it was', async () => {
    const project = join(home, 'work', 'codex-keyed');
    await mkdir(join(project, '.git'), { recursive: true });
    const path = join(project, '.codex', 'config.toml');
    const existing = `[mcp_servers.engage-contact]\ncommand = "npx"\n\n[mcp_servers.engage-contact.env]\nENGAGE_API_KEY = "${KEY}"\n`;
    await writeConfig(path, existing);
    const ran = await setup([...writeArgs('codex'), '--config-path', path], '');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/sets ENGAGE_API_KEY, which must not be written in this file/);
    expect(ran.stdout + ran.stderr).not.toContain(KEY);
    expect(await readFile(path, 'utf8')).toBe(existing);
  });

  it.each([['claude-desktop', 'claude_desktop_config.json']] as const)(
    'refuses another file for %s, which has no env reference, writing nothing',
    async (hostId, name) => {
      const path = join(home, 'shared', name);
      const ran = await setup([...writeArgs(hostId), '--config-path', path]);
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(path);
      expect(ran.stderr).toMatch(/would put the API key in .* not your own .* config/);
      expect(ran.stderr).toContain('--config-path');
      expect(ran.stdout + ran.stderr).not.toContain(KEY);
      expect(existsSync(path)).toBe(false);
    },
  );

  it('gives the key only to the usual file, however it is named, and outside git work trees', async () => {
    const usual = join(home, '.cursor', 'mcp.json');
    await mkdir(join(home, '.cursor'), { recursive: true });
    await symlink(join(home, '.cursor'), join(home, 'cursor-link'));
    expect(await keyPlacement(HOSTS.cursor, usual, usual)).toEqual({ kind: 'key' });
    expect(await keyPlacement(HOSTS.cursor, join(home, 'cursor-link', '..', '.cursor', 'mcp.json'), usual)).toEqual({ kind: 'key' });
    expect(await keyPlacement(HOSTS.cursor, join(home, 'cursor-link', 'mcp.json'), usual)).toEqual({ kind: 'key' });
    expect(await keyPlacement(HOSTS.cursor, join(home, 'elsewhere.json'), usual)).toMatchObject({ kind: 'reference', reference: '${env:ENGAGE_API_KEY}' });
    // A linked git worktree has a .git file, not a folder.
    await mkdir(join(home, 'linked', 'deep'), { recursive: true });
    await writeFile(join(home, 'linked', '.git'), 'gitdir: /elsewhere\n');
    expect(await gitWorkTreeOf(join(home, 'linked', 'deep'))).toBe(join(home, 'linked'));
    expect(await gitWorkTreeOf(home)).toBeUndefined();
  });

  it("never writes the key into VS Code's workspace .vscode/mcp.json", async () => {
    const path = join(home, 'project', '.vscode', 'mcp.json');
    const ran = await setup([...writeArgs('vscode'), '--config-path', path]);
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text).servers['engage-contact'].env.ENGAGE_API_KEY).toBe('${input:engage-api-key}');
  });
});

describe('no rewrite with losses', () => {
  const latin1 = Buffer.concat([Buffer.from('{"name": "Caf'), Buffer.from([0xe9]), Buffer.from('", "mcpServers": {}}\n')]);
  it.each([
    ['a Latin-1 byte (invalid UTF-8)', latin1, /not valid UTF-8/],
    // Setup writes only its own entries anew: the respelling JSON.stringify would do matters in them alone.
    ['a big integer in our entry', '{"mcpServers": {"engage-contact": {"retries": 12345678901234567890}}}\n', /12345678901234567890/],
    ['a number spelled 1.50 in our entry', '{"mcpServers": {"engage-contact": {"price": 1.50}}}\n', /1\.50/],
    ['a number spelled 1e3 in our entry', '{"mcpServers": {"engage-contact": {"limit": 1e3}}}\n', /1e3/],
    ['our entry given twice', '{"mcpServers": {"engage-contact": {"command": "x"}, "engage-contact": {"command": "y"}}}\n', /"engage-contact" twice/],
  ])('refuses a JSON config with %s, naming the problem and the file, changing nothing', async (_, content, problem) => {
    const path = configPath('cursor');
    await writeConfig(path, content);
    const before = await readFile(path);
    const ran = await setup(writeArgs('cursor'));
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(path);
    expect(ran.stderr).toMatch(problem);
    expect(ran.stderr).toContain('nothing was changed');
    expect(await readFile(path)).toEqual(before);
    expect(await backupsOf(path)).toEqual([]);
  });

  it('tells numbers and keys from look-alikes inside strings, and repeats across objects from duplicates', () => {
    const merge = (text: string) => mergeJsonConfig(text, HOSTS.cursor, { 'engage-contact': { command: 'npx' } }, 'c.json');
    const fine = '{"a": [0, -1, 1.5, 1e+21, 1.2e-7, {"a": 1}, {"a": 2}], "s": "1.50 \\" {\\"a\\": 1e3, \\"a\\": 2}", "mcpServers": {"a": {"a": 1}}}';
    expect(JSON.parse(merge(fine)).s).toBe(JSON.parse(fine).s);
    // In our own entry, which is written anew; the same outside it is the person's, kept as it is.
    const ours = (value: string) => `{"mcpServers": {"engage-contact": {"x": ${value}}}}`;
    expect(() => merge(ours('{"y": [{"k": 1, "k": 2}]}'))).toThrow(/"k" twice in one object \(line 1, column 57, in its "engage-contact" entry/);
    expect(() => merge(ours('-0'))).toThrow(/-0 .* rewritten as 0/);
    expect(() => merge(ours('[1E3]'))).toThrow(/1E3 .* rewritten as 1000/);
    expect(() => merge(ours('1e21'))).toThrow(/rewritten as 1e\+21/);
    const theirs = '{"x": {"y": [{"k": 1, "k": 2}]}, "z": [-0, 1E3, 1e21], "mcpServers": {}}';
    expect(merge(theirs).startsWith('{"x": {"y": [{"k": 1, "k": 2}]}, "z": [-0, 1E3, 1e21], "mcpServers": {"engage-contact":')).toBe(true);
  });

  it('keeps numbers and repeated keys in a TOML config byte for byte, as it edits only our lines', () => {
    const existing = '[mcp_servers.engage-contact]\nstartup_timeout_sec = 1e3\nretries = 12345678901234567890\nprice = 1.50\n';
    const merged = mergeTomlConfig(existing, { 'engage-contact': { command: 'npx', args: [], env: {} } }, 'config.toml');
    expect(merged).toContain('startup_timeout_sec = 1e3\nretries = 12345678901234567890\nprice = 1.50\n');
  });

  it('refuses a TOML config with a Latin-1 byte, changing nothing', async () => {
    const path = configPath('codex');
    await writeConfig(path, Buffer.concat([Buffer.from('model = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]));
    const before = await readFile(path);
    const ran = await setup(writeArgs('codex'));
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(path);
    expect(ran.stderr).toMatch(/not valid UTF-8/);
    expect(await readFile(path)).toEqual(before);
    expect(await backupsOf(path)).toEqual([]);
  });

  it('refuses to replace a read-only config, changing nothing', async () => {
    const path = configPath('cursor');
    const original = '{"mcpServers": {}}\n';
    await writeConfig(path, original, 0o444);
    const ran = await setup(writeArgs('cursor'));
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(path);
    expect(ran.stderr).toMatch(/read-only/);
    expect(await readFile(path, 'utf8')).toBe(original);
    expect(await modeOf(path)).toBe(0o444);
    expect(await backupsOf(path)).toEqual([]);
  });

  it('removes a lock left by a run that has ended, and leaves no lock behind', async () => {
    const path = configPath('cursor');
    await writeConfig(path, '{"mcpServers": {}}\n');
    const ended = spawn(process.execPath, ['-e', '']);
    await new Promise((done) => ended.on('close', done));
    await writeFile(`${path}.engage-setup.lock`, `${ended.pid}\n`);
    // Left by a run that crashed some seconds ago (a fresh lock of an ended run may already be another's).
    const past = new Date(Date.now() - 10_000);
    await utimes(`${path}.engage-setup.lock`, past, past);
    const ran = await setup(writeArgs('cursor'));
    expect(ran.code, ran.stderr).toBe(0);
    expect(Object.keys(JSON.parse(await readFile(path, 'utf8')).mcpServers)).toEqual(['engage-contact']);
    expect(existsSync(`${path}.engage-setup.lock`)).toBe(false);
  });

  it.each(['cursor', 'codex'] as const)('loses no entry when 7 processes add different servers to one %s file at once', async (hostId) => {
    const path = configPath(hostId);
    const domains = ['contact', 'campaign', 'inbox', 'channel', 'product', 'billing', 'tenant'];
    for (let round = 0; round < 3; round++) {
      await rm(dirname(path), { recursive: true, force: true });
      const runs = await Promise.all(domains.map((domain) => setup(writeArgs(hostId, domain))));
      for (const ran of runs) expect(ran.code, ran.stderr).toBe(0);
      const text = await readFile(path, 'utf8');
      const servers = hostId === 'codex' ? (parseToml(text) as any).mcp_servers : JSON.parse(text).mcpServers;
      expect(Object.keys(servers).sort(), `round ${round}`).toEqual(domains.map((domain) => `engage-${domain}`).sort());
      expect(await backupsOf(path)).toHaveLength(6);
      expect((await readdir(dirname(path))).filter((name) => /\.(tmp|lock)$/.test(name))).toEqual([]);
    }
  });
});

/** A fake terminal for askHidden: what is written to it arrives as typed or pasted bytes. */
function fakeTerminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => input }) as unknown as NodeJS.ReadStream & PassThrough;
  const screen = new PassThrough();
  let shown = '';
  screen.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  return { input, screen, shown: () => shown };
}

describe('the hidden key prompt', () => {
  it.each([
    ['arrow keys', ['sk_live_abc1', '\x1b[D\x1b[C\x1b[A\x1b[B', '23\r'], 'sk_live_abc123'],
    ['Home, End and application-mode cursor keys', ['sk_\x1b[H\x1b[F\x1b[1~\x1b[4~\x1bOH\x1bOF\x1bOD', 'live\r'], 'sk_live'],
    ['Delete and Backspace', ['sk_live_abcX\x1b[3~12X\x7f3\r'], 'sk_live_abc123'],
    ['a bracketed paste', ['\x1b[200~sk_live_abc123\x1b[201~\r'], 'sk_live_abc123'],
    ['a bracketed paste ending in a newline, split across reads', ['\x1b[2', '00~sk_live_', 'abc123\r\n\x1b[20', '1~', '\r'], 'sk_live_abc123'],
    ['modified arrow keys', ['sk\x1b[1;5D\x1b[1;2C_live\r'], 'sk_live'],
  ])('keeps %s out of the key', async (_, chunks, expected) => {
    const terminal = fakeTerminal();
    const answer = askHidden('API key: ', terminal.input, terminal.screen);
    for (const chunk of chunks) {
      terminal.input.write(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await answer).toBe(expected);
    expect(terminal.shown()).toBe('API key: \n');
  });

  it('aborts on Ctrl-C', async () => {
    const terminal = fakeTerminal();
    const answer = askHidden('API key: ', terminal.input, terminal.screen);
    terminal.input.write('sk_live\x03');
    await expect(answer).rejects.toBeInstanceOf(Cancelled);
  });
});

const hasScript = existsSync('/usr/bin/script');

/** The bin in a pseudo-terminal (util-linux script), its questions answered by flags, the key typed. */
function setupAtTerminal(keystrokes: string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const command = `${process.execPath} ${CLI} --host cursor --servers contact --base-url ${BASE_URL} --yes`;
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env: { ...environment(), SHELL: '/bin/sh' }, cwd: home });
    let stdout = '';
    let typed = false;
    child.stdout.on('data', async (chunk: Buffer) => {
      stdout += chunk.toString();
      if (typed || !stdout.includes('API key')) return;
      typed = true;
      for (const keys of keystrokes) {
        await new Promise((wait) => setTimeout(wait, 100));
        child.stdin.write(keys);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr: '' }));
    setTimeout(() => child.kill(), 15_000);
  });
}

describe.skipIf(!hasScript)('the hidden key prompt at a real terminal', () => {
  it('writes the key typed with arrow keys, Delete, Home and End and a bracketed paste, and shows none of it', async () => {
    const ran = await setupAtTerminal(['sk_\x1b[D\x1b[C', '\x1b[H\x1b[F', 'liveX\x1b[3~', '\x1b[200~_abc123\x1b[201~', '\r']);
    expect(ran.code, ran.stdout).toBe(0);
    expect(ran.stdout).not.toContain('sk_live');
    expect(JSON.parse(await readFile(configPath('cursor'), 'utf8')).mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe('sk_live_abc123');
  });

  it('writes nothing when Ctrl-C is pressed at the key prompt', async () => {
    const ran = await setupAtTerminal(['sk_live', '\x03']);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toContain('cancelled; nothing was changed');
    expect(existsSync(configPath('cursor'))).toBe(false);
  });
});
