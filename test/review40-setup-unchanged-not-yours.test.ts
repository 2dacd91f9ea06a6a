// Review 40, a config already holding our entries and the key, but readable by others, is made its
// owner's only on an unchanged run (3c4ea08). Where the file was another user's (root's: copied in
// with sudo cp, left by a run with sudo), the chmod was refused and setup ended on the system's
// words alone: "EPERM: operation not permitted, chmod '…'". Now it says the file holds the key and
// is readable by others, that it could not be made theirs only, and how to take it back. These run
// setup as another user (setpriv), so only where root can.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, SETUP_CLI, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review40-unchanged-');
const KEY = 'eng_live_40d0e5d0e5d0e5d0e5d0e5d0e5';
const USER = 4242;
const canSwitchUser = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

describe.skipIf(!canSwitchUser)('an unchanged config of root’s, readable by others', () => {
  it('is refused with whose it is and how to take it back, not the bare EPERM', async () => {
    await chown(home.dir, USER, USER);
    // Root writes the entries (the home is USER's, so the file becomes theirs), then it is made root's and 0644.
    expect((await setupWithKey(home.dir, 'cursor', KEY)).code).toBe(0);
    const path = configPathIn(home.dir, 'cursor');
    await chown(path, 0, 0);
    await chmod(path, 0o644);
    const args = ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'];
    const ran = spawnSync('/usr/bin/setpriv', [`--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', process.execPath, SETUP_CLI, ...args], {
      env: { PATH: process.env.PATH, HOME: home.dir },
      cwd: home.dir,
      input: `${KEY}\n`,
      encoding: 'utf8',
    });
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(`${path} holds the key and is readable by others (mode 0644), and could not be made yours only (EPERM)`);
    expect(ran.stderr).toContain(`take it back (sudo chown "$(id -un)" ${path}), then run again.`);
    expect(ran.stderr).not.toContain(KEY);
    expect((await stat(path)).mode & 0o777).toBe(0o644);
  });
});
