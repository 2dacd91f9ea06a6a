// Review 40, a read-only config that is not the person's to change was answered "Make it writable
// (chmod u+w)", which only its owner can do: a file of root's (copied in with sudo), or one reached
// through a folder link into another tool's store (home-manager linking ~/.config/Code/User whole
// into /nix/store), which 541afda named as the tool's only where the file itself is the link. Now
// the first says whose it is and how to take it back, the second where it leads and to add the
// servers where that tool takes its settings. These run setup as another user (setpriv), so only
// where root can.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, lchown, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPathIn, SETUP_CLI } from './setup-run.js';

const USER = 4242;
const canSwitchUser = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');
const ORIGINAL = '{"servers": {}}\n';

let home: string;
/** A folder of root's outside the home, as /nix/store is. */
let store: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review40-readonly-home-'));
  store = await mkdtemp(join(tmpdir(), 'engage-review40-readonly-store-'));
  await chmod(store, 0o755);
  await chown(home, USER, USER);
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(store, { recursive: true, force: true });
});

/** Setup for VS Code run as USER in the home (VS Code asks for the key itself: none given). */
function setupAsUser(): { status: number | null; stderr: string } {
  const args = ['--host', 'vscode', '--servers', 'contact', '--base-url', 'https://api.example.com', '--yes'];
  const run = spawnSync('/usr/bin/setpriv', [`--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', process.execPath, SETUP_CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, '.config') },
    cwd: home,
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr };
}

/** `folder` and those above it up to the home made, the user's. */
async function usersFolders(folder: string): Promise<void> {
  for (let at = folder; at !== home; at = dirname(at)) {
    await mkdir(at, { recursive: true });
    await chown(at, USER, USER);
  }
}

describe.skipIf(!canSwitchUser)('a read-only config not the person’s to make writable', () => {
  it('a file of root’s: says whose it is and how to take it back, not chmod alone', async () => {
    const path = configPathIn(home, 'vscode');
    await usersFolders(dirname(path));
    await writeFile(path, ORIGINAL, { mode: 0o444 });
    const ran = setupAsUser();
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(
      `${path} is read-only, so it was not replaced; nothing was changed. It is not yours to make writable: ${path} belongs to another user (uid 0); ` +
        `if it is yours, made another's by a run with sudo, take it back (sudo chown "$(id -un)" ${path}); then make it writable (chmod u+w) and run again`,
    );
  });

  it('a file in a folder linked into a store of root’s: named as that tool’s', async () => {
    const path = configPathIn(home, 'vscode');
    await usersFolders(dirname(dirname(path)));
    await writeFile(join(store, 'mcp.json'), ORIGINAL, { mode: 0o444 });
    await symlink(store, dirname(path));
    await lchown(dirname(path), USER, USER);
    const ran = setupAsUser();
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(`${path} leads through a link to ${join(store, 'mcp.json')}, which is read-only: the tool that made the link keeps that file`);
    expect(ran.stderr).not.toContain('chmod');
  });
});
