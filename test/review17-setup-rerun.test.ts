// Review 17, setup run again: a run that changed the key or the address of servers already in the
// file said "Added engage-contact, engage-campaign to …", as if they were new, and nothing of what
// it replaced. A person who ran it again to change the key could not tell from it whether the key
// was replaced or the servers added twice. Now each server says what happened to it: added,
// which variables changed (by name, never a value), or unchanged.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { configPathIn, setupWith } from './setup-run.js';

const FIRST_KEY = 'eng_live_1111aaaa2222bbbb3333cccc4444dddd';
const SECOND_KEY = 'eng_live_5555eeee6666ffff7777aaaa8888bbbb';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review17-rerun-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const run = (host: HostId, servers: string, key: string, baseUrl = 'https://api.example.com') =>
  setupWith(home, ['--host', host, '--servers', servers, '--base-url', baseUrl, '--key-stdin', '--yes'], `${key}\n`);

describe('a second run says what it changed', () => {
  it.each(['cursor', 'codex', 'claude-code', 'gemini'] as const)('%s: a new key is reported as ENGAGE_API_KEY changed, not as servers added', async (host) => {
    expect((await run(host, 'contact,campaign', FIRST_KEY)).code).toBe(0);
    const second = await run(host, 'contact,campaign', SECOND_KEY);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toMatch(/^Added/);
    expect(second.stdout).toMatch(/engage-contact: ENGAGE_API_KEY changed/);
    expect(second.stdout).toMatch(/engage-campaign: ENGAGE_API_KEY changed/);
    expect(second.stdout).toMatch(/previous file is kept as /);
    expect(second.stdout + second.stderr).not.toContain(FIRST_KEY.slice(9));
    expect(second.stdout + second.stderr).not.toContain(SECOND_KEY.slice(9));
    expect(await readFile(configPathIn(home, host), 'utf8')).toContain(SECOND_KEY);
  });

  it('a server added beside one already there: the new one is added, the other unchanged', async () => {
    await run('cursor', 'contact', FIRST_KEY);
    const second = await run('cursor', 'contact,campaign', FIRST_KEY);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/engage-contact: unchanged/);
    expect(second.stdout).toMatch(/engage-campaign: added/);
  });

  it('a new address and key at once: both named', async () => {
    await run('gemini', 'contact', FIRST_KEY);
    const second = await run('gemini', 'contact', SECOND_KEY, 'https://api2.example.com');
    expect(second.stdout).toMatch(/engage-contact: ENGAGE_API_KEY, ENGAGE_BASE_URL changed/);
  });

  it('VS Code (the key is not in the file): a new address is the one change', async () => {
    const args = (baseUrl: string) => ['--host', 'vscode', '--servers', 'contact', '--base-url', baseUrl, '--yes'];
    await setupWith(home, args('https://api.example.com'), '');
    const second = await setupWith(home, args('https://api2.example.com'), '');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/engage-contact: ENGAGE_BASE_URL changed/);
  });

  it("VS Code: the key input edited by hand is named as setup's one change, the server as unchanged", async () => {
    const args = ['--host', 'vscode', '--servers', 'contact', '--base-url', 'https://api.example.com', '--yes'];
    await setupWith(home, args, '');
    const path = configPathIn(home, 'vscode');
    const config = JSON.parse(await readFile(path, 'utf8'));
    config.inputs[0].description = 'my own words';
    await writeFile(path, JSON.stringify(config, null, 2));
    const second = await setupWith(home, args, '');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/engage-contact: unchanged/);
    expect(second.stdout).toMatch(/the input engage-api-key \(VS Code asks for the key with it\): set/);
  });

  it('into a file with other servers, our first run: each server added, the file named', async () => {
    const path = configPathIn(home, 'cursor');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{"mcpServers": {"github": {"command": "gh-mcp"}}}\n');
    const first = await run('cursor', 'contact', FIRST_KEY);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(path);
    expect(first.stdout).toMatch(/engage-contact: added/);
    expect(first.stdout).not.toMatch(/github/);
  });
});
