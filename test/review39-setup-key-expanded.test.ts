// Review 39, a key the host would change: Claude Code replaces ${NAME} and ${NAME:-default} in a
// server's env as it reads ~/.claude.json (tried with the real CLI: a key written as
// eng_live_a${HOME}b reached the server as eng_live_a/home/…b), Cursor its ${env:NAME} and
// ${userHome}, Gemini CLI $NAME and ${NAME}, none with a way to keep a $ as written. The API's
// keys may hold any printable ASCII, so setup wrote such a key and the server was sent another
// one, refused with 401 and a word to make a new key. Setup now refuses that key for those hosts,
// before writing anything; Codex and Claude Desktop, which expand nothing, take it as it is.
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { configPathIn, homePerTest, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-expand-');

describe('a key holding what the host expands', () => {
  it.each([
    ['claude-code', 'eng_live_39a${HOME}b7c2e9'],
    ['claude-code', 'eng_live_39a${NOPE:-x}b7c2e9'],
    ['cursor', 'eng_live_39a${userHome}b7c2e9'],
    ['gemini', 'eng_live_39a$HOME7c2e9'],
  ] as const)('%s, %s: refused, nothing written', async (host, key) => {
    const ran = await setupWithKey(home.dir, host, key);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain('reads the name of an environment variable');
    expect(ran.stdout + ran.stderr).not.toContain(key);
    expect(await readdir(home.dir)).toEqual([]);
  });

  it.each([
    ['codex', 'eng_live_39a${HOME}b$HOME'],
    ['claude-desktop', 'eng_live_39a${HOME}b$HOME'],
    ['claude-code', 'eng_live_39a$HOME'],
  ] as const)('%s, %s: written as it is, the host expanding none of it', async (host: HostId, key) => {
    const ran = await setupWithKey(home.dir, host, key);
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(configPathIn(home.dir, host), 'utf8');
    expect(text).toContain(key);
  });
});
