// Review 14, the setup command and hostile existing configs: a config nesting arrays some ten
// thousand deep (valid JSON, valid TOML) ended the run with "Maximum call stack size exceeded"
// and nothing else: not which file, not that nothing was changed, not what to do. The file was
// left as it was; the message now says so, as for every other config it refuses. (JSON: nested
// in our own entry, the only part of the file setup reads back and writes anew.)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { configPathIn, setupWithKey } from './setup-run.js';

const DEPTH = 100_000;

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review14-deep-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const configPath = (host: HostId) => configPathIn(home, host);

const setup = (host: HostId) => setupWithKey(home, host, 'sk_live_9f2c4e7a1b3d5f8a6c0e');

describe('a config nested too deeply to merge', () => {
  it.each([
    ['cursor', `{"mcpServers": {"engage-contact": {"deep": ${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}}}\n`],
    ['codex', `deep = ${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}\n`],
  ] as const)('%s: refused with a message naming the file and saying nothing was changed', async (host, text) => {
    const path = configPath(host);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
    const ran = await setup(host);
    expect(ran.code).toBe(1);
    expect(ran.stderr).not.toMatch(/call stack/);
    expect(ran.stderr).toContain(path);
    expect(ran.stderr).toMatch(/nothing was changed/i);
    expect(ran.stderr).toContain('--print');
    expect(await readFile(path, 'utf8')).toBe(text);
  });
});
