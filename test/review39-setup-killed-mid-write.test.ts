// Review 39, a run ended mid-write (Ctrl-C, a crash, the terminal closed): the rename keeps the
// config whole, old or new, but the new text written beside it, with the key, stayed there for
// good (<file>.engage-setup-<pid>-<time>.tmp), and no later run removed it. Runs write those only
// under the file's lock, so a later run now removes any it finds there under the lock.
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-killed-');
const KEY = 'eng_live_39d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7';
const ORIGINAL = '{"mcpServers": {"mine": {"command": "x"}}}\n';

/** Kills the run right before its new text would be renamed into place, as Ctrl-C at that moment would. */
const KILL_BEFORE_RENAME = `import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
fs.promises.rename = () => { process.kill(process.pid, 'SIGKILL'); return new Promise(() => {}); };
syncBuiltinESMExports();
`;

describe('a run ended mid-write', () => {
  it('leaves the config whole, and the next run removes the text it left beside it, key and all', async () => {
    const path = configPathIn(home.dir, 'cursor');
    const killer = join(home.dir, 'kill-before-rename.mjs');
    await writeFile(killer, KILL_BEFORE_RENAME);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, ORIGINAL);

    const killed = await setupWithKey(home.dir, 'cursor', KEY, { NODE_OPTIONS: `--import=${killer}` });
    expect(killed.code, killed.stderr).toBeNull();
    expect(await readFile(path, 'utf8')).toBe(ORIGINAL);
    const left = (await readdir(dirname(path))).filter((name) => name.includes('.engage-setup-'));
    expect(left).toHaveLength(1);
    expect(await readFile(join(dirname(path), left[0] as string), 'utf8')).toContain(KEY);

    // Run again a while later: the killed run's lock is old by then.
    const lock = `${path}.engage-setup.lock`;
    const aWhileAgo = new Date(Date.now() - 30_000);
    await utimes(lock, aWhileAgo, aWhileAgo);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(await readFile(path, 'utf8')).mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe(KEY);
    expect((await readdir(dirname(path))).filter((name) => name.includes('.engage-setup'))).toEqual([]);
  });
});
