// Review 43, there was no way to take our servers out again: a person had to find and cut seven
// entries by hand, in the host's own format. Now --remove takes out the entries setup writes (our
// seven names, or those of --servers) and nothing else, every other byte of the file kept (comments
// a host reads too), with the safety of a write: the lock, a backup, the host's save merged.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTS } from '../packages/setup/src/hosts.js';
import { removeJsonServers } from '../packages/setup/src/json-remove.js';
import { configPathIn, homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-review43-remove-');
const KEY = 'k-remove-1234567890';
const BASE_URL = 'https://api.example.com';

const add = (host: string, servers = 'all') =>
  setupWith(home.dir, ['--host', host, '--servers', servers, '--base-url', BASE_URL, '--key-stdin', '--yes'], `${KEY}\n`);
const remove = (host: string, ...flags: string[]) => setupWith(home.dir, ['--host', host, '--remove', '--yes', ...flags], '');

async function writeConfig(host: 'cursor' | 'codex' | 'vscode', text: string): Promise<string> {
  const path = configPathIn(home.dir, host);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return path;
}

describe('--remove', () => {
  it('Cursor: the seven entries setup added go, and the file is as it was before, a backup kept', async () => {
    const original = '{\n  "theme": "dark",\n  "mcpServers": {\n    "mine": { "command": "my-server" }\n  },\n  "last": [1, 2]\n}\n';
    const path = await writeConfig('cursor', original);
    expect((await add('cursor')).code).toBe(0);
    const ran = await remove('cursor');
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(await readFile(path, 'utf8')).toBe(original);
    expect(ran.stdout).toContain(`Removed from ${path} (the previous file is kept as ${path}.backup-`);
    for (const domain of ['contact', 'campaign', 'billing']) expect(ran.stdout).toContain(`  engage-${domain}: removed\n`);
    expect(ran.stdout).toContain('Restart Cursor to stop them.');
    expect((await readdir(dirname(path))).filter((name) => name.includes('.backup-'))).toHaveLength(2);
    const again = await remove('cursor');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('; nothing to remove.');
  });

  it('Codex: their tables go, and the file is as it was before', async () => {
    const original = '# my settings\nmodel = "o3"\n\n[mcp_servers.mine]\ncommand = "my-server" # mine\n\n# trailing words\n';
    const path = await writeConfig('codex', original);
    expect((await add('codex')).code).toBe(0);
    expect(await readFile(path, 'utf8')).toContain('[mcp_servers.engage-contact.env]');
    const ran = await remove('codex');
    expect(ran.stderr).toBe('');
    expect(await readFile(path, 'utf8')).toBe(original);
  });

  it('--servers: only those named go; ours not named and the person’s stay', async () => {
    const path = await writeConfig('codex', 'model = "o3"\n');
    expect((await add('codex', 'contact,billing')).code).toBe(0);
    const ran = await remove('codex', '--servers', 'billing');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain('  engage-billing: removed\n');
    expect(ran.stdout).not.toContain('engage-contact');
    const after = await readFile(path, 'utf8');
    expect(after).toContain('[mcp_servers.engage-contact]');
    expect(after).not.toContain('engage-billing');
  });

  it('VS Code: the entry goes, its comments and trailing commas stay; the key input goes once nothing names it', async () => {
    const original = '// mine\n{\n\t"servers": {\n\t\t/* every day */\n\t\t"mine": {\n\t\t\t"command": "my-server", // no args\n\t\t},\n\t},\n}\n';
    const path = await writeConfig('vscode', original);
    expect((await setupWith(home.dir, ['--host', 'vscode', '--servers', 'contact', '--base-url', BASE_URL, '--yes'], '')).code).toBe(0);
    const ran = await remove('vscode');
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toContain('  engage-contact: removed\n  the input engage-api-key (no entry uses it now): removed\n');
    expect(await readFile(path, 'utf8')).toBe(original.replace('\t},\n}\n', '\t},\n\t"inputs": [],\n}\n'));
  });

  it('VS Code: the key input stays while another entry names it', async () => {
    const path = await writeConfig('vscode', '{"servers": {"mine": {"command": "x", "env": {"K": "${input:engage-api-key}"}}}}\n');
    expect((await setupWith(home.dir, ['--host', 'vscode', '--servers', 'contact', '--base-url', BASE_URL, '--yes'], '')).code).toBe(0);
    const ran = await remove('vscode');
    expect(ran.stdout).not.toContain('the input');
    const after = JSON.parse(await readFile(path, 'utf8'));
    expect(Object.keys(after.servers)).toEqual(['mine']);
    expect(after.inputs.map((input: { id: string }) => input.id)).toEqual(['engage-api-key']);
  });

  it('no file: nothing made; adding flags refused; --help shows it', async () => {
    const missing = await remove('cursor');
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain(`${configPathIn(home.dir, 'cursor')} does not exist; nothing to remove.`);
    expect(await readdir(home.dir)).toEqual([]);
    const adding = await remove('cursor', '--base-url', BASE_URL);
    expect(adding.code).toBe(2);
    expect(adding.stderr).toContain('--remove takes --host, --servers, --config-path and --yes only; --base-url is for adding servers.');
    expect((await setupWith(home.dir, ['--help'], '')).stdout).toContain('--remove ');
    expect((await setupWith(home.dir, ['--remvoe'], '')).stderr).toContain('Did you mean --remove?');
  });

  it('refuses a file that is no JSON, leaving it', async () => {
    const path = await writeConfig('cursor', '{"mcpServers": {"engage-contact": {}},}');
    const ran = await remove('cursor');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is not valid JSON as Cursor reads it`);
    expect(await readFile(path, 'utf8')).toBe('{"mcpServers": {"engage-contact": {}},}');
  });
});

describe('removeJsonServers, in each layout', () => {
  const cursor = HOSTS.cursor;
  const cut = (text: string, names = ['engage-contact']) => removeJsonServers(text, cursor, names, 'mcp.json');
  it.each([
    ['first of one line', '{"mcpServers": {"engage-contact": {"a": 1}, "b": 2}}', '{"mcpServers": {"b": 2}}'],
    ['middle of one line', '{"mcpServers": {"a": 1, "engage-contact": {}, "b": 2}}', '{"mcpServers": {"a": 1, "b": 2}}'],
    ['last of one line', '{"mcpServers": {"a": 1, "engage-contact": {}}}', '{"mcpServers": {"a": 1}}'],
    ['the only one', '{"mcpServers": {\n  "engage-contact": {}\n}}', '{"mcpServers": {}}'],
    [
      'last, CRLF',
      '{\r\n  "mcpServers": {\r\n    "a": 1,\r\n    "engage-contact": {\r\n      "x": 1\r\n    }\r\n  }\r\n}\r\n',
      '{\r\n  "mcpServers": {\r\n    "a": 1\r\n  }\r\n}\r\n',
    ],
    ['none of ours', '{"mcpServers": {"a": 1}}', '{"mcpServers": {"a": 1}}'],
    ['elsewhere than the servers', '{"other": {"engage-contact": 1}}', '{"other": {"engage-contact": 1}}'],
  ])('%s', (_, before, after) => {
    expect(cut(before)).toBe(after);
  });
  it('several, side by side', () => {
    const text = '{\n  "mcpServers": {\n    "engage-a": 1,\n    "mine": 2,\n    "engage-b": 3,\n    "engage-c": 4\n  }\n}\n';
    expect(cut(text, ['engage-a', 'engage-b', 'engage-c'])).toBe('{\n  "mcpServers": {\n    "mine": 2\n  }\n}\n');
  });
});
