// Review 39, a file that already holds our entries as given, key and all, but readable by others
// (mode 0644: copied, restored from a backup tool, or made so by hand): setup said "already has …
// as given; nothing to change" and left it so, though a file it writes the key into is made its
// owner's only. Now the file is made 0600 then too, and setup says so.
import { chmod, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWith, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-mode-');
const KEY = 'eng_live_39a11ce5a11ce5a11ce5a11ce5a11ce5a11c';

describe('a file holding our entries as given, readable by others', () => {
  it.each(['cursor', 'codex'])('%s: made 0600, and said so', async (host) => {
    expect((await setupWithKey(home.dir, host, KEY)).code).toBe(0);
    const path = configPathIn(home.dir, host as 'cursor' | 'codex');
    await chmod(path, 0o644);
    const ran = await setupWithKey(home.dir, host, KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(
      'as given; nothing to change.\nIt holds the key and was readable by others (mode 0644); it is now readable by you only (0600).',
    );
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('VS Code, whose file holds no key: left as it is', async () => {
    const args = ['--host', 'vscode', '--servers', 'contact', '--base-url', 'https://api.example.com', '--yes'];
    expect((await setupWith(home.dir, args, '')).code).toBe(0);
    const path = configPathIn(home.dir, 'vscode');
    await chmod(path, 0o644);
    const ran = await setupWith(home.dir, args, '');
    expect(ran.stdout).not.toContain('readable by others');
    expect((await stat(path)).mode & 0o777).toBe(0o644);
  });
});
