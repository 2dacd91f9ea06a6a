// Review 14, the setup command and file modes: a key with a character JSON and TOML escape (a
// quote, a backslash: printable ASCII, so the servers' own check takes it) was written into an
// existing 0644 config that stayed 0644, readable by every user of the machine. Whether the file
// held the key was judged by finding the key's raw text in the file, and its escaped spelling is
// not that text.
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import type { HostId } from '../packages/setup/src/hosts.js';
import { configPathIn, setupWithKey } from './setup-run.js';

const KEYS = ['sk_live_9f2c"4e7a1b3d5f8a', 'sk_live_9f2c\\4e7a1b3d5f8a'];

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review14-mode-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const configPath = (host: HostId) => configPathIn(home, host);

const setup = (host: HostId, key: string) => setupWithKey(home, host, key);

describe('a key that JSON or TOML escapes', () => {
  it.each(KEYS)('%s: the existing 0644 JSON config it is written into becomes 0600', async (key) => {
    const path = configPath('cursor');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '{"mcpServers": {}}\n');
    await chmod(path, 0o644);
    const ran = await setup('cursor', key);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(await readFile(path, 'utf8')).mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe(key);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it.each(KEYS)('%s: the existing 0644 config.toml it is written into becomes 0600', async (key) => {
    const path = configPath('codex');
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, 'model = "o3"\n');
    await chmod(path, 0o644);
    const ran = await setup('codex', key);
    expect(ran.code, ran.stderr).toBe(0);
    expect((parseToml(await readFile(path, 'utf8')) as any).mcp_servers['engage-contact'].env.ENGAGE_API_KEY).toBe(key);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});
