// Review 39, a config or its folder this user may not read or write, most often made root's by an
// earlier run with sudo (sudo cursor, sudo npx … setup) in the person's own home: setup said
// "cannot be read (EACCES)", or "cannot be written (EACCES)" with, since the disk-full change, "run
// as the user who owns it": root, no way out. Now it says whose it is and what to run: take it
// back (sudo chown) when it is another user's, chmod when it is theirs. These run setup as another
// user (setpriv), so only where root can.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, SETUP_CLI } from './setup-run.js';

const home = homePerTest('engage-review39-notyours-');
const KEY = 'eng_live_39c0ffee0c0ffee0c0ffee0c0ffee0c0ffee';
const USER = 4242;
const ORIGINAL = '{"mcpServers": {}}\n';
const canSwitchUser = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

/** Setup for Cursor run as USER in the home, the key on stdin. */
function setupAsUser(): { status: number | null; stderr: string } {
  const args = ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'];
  const run = spawnSync('/usr/bin/setpriv', [`--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', process.execPath, SETUP_CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: home.dir },
    cwd: home.dir,
    input: `${KEY}\n`,
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr };
}

/** The home USER's, and Cursor's folder and file in it as `made` leaves them. */
async function cursorConfig(made: (path: string) => Promise<void>): Promise<string> {
  const path = configPathIn(home.dir, 'cursor');
  await chown(home.dir, USER, USER);
  await mkdir(dirname(path));
  await writeFile(path, ORIGINAL);
  await made(path);
  return path;
}

describe.skipIf(!canSwitchUser)('a config or its folder this user may not use', () => {
  it("a folder root's: says to take it back", async () => {
    const path = await cursorConfig(async () => {});
    const ran = setupAsUser();
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(
      `you may not write in its folder: ${dirname(path)} belongs to another user (uid 0); if it is yours, made another's by a run with sudo, take it back (sudo chown -R "$(id -un)" ${dirname(path)}), then run again. Nothing was changed.`,
    );
    expect(await readFile(path, 'utf8')).toBe(ORIGINAL);
  });

  it("a file root's, readable by root only: says to take it back", async () => {
    const path = await cursorConfig(async (file) => {
      await chown(dirname(file), USER, USER);
      await chmod(file, 0o600);
    });
    const ran = setupAsUser();
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(`${path} cannot be read (EACCES): ${path} belongs to another user (uid 0);`);
    expect(ran.stderr).toContain(`take it back (sudo chown "$(id -un)" ${path})`);
  });

  it('a folder of their own, not writable: says to chmod it', async () => {
    const path = await cursorConfig(async (file) => {
      await chown(dirname(file), USER, USER);
      await chown(file, USER, USER);
      await chmod(dirname(file), 0o555);
    });
    const ran = setupAsUser();
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(`make ${dirname(path)} readable and writable for you (chmod u+rwx ${dirname(path)}), then run again.`);
  });
});
