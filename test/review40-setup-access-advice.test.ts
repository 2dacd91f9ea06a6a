// Review 40, the advice for a config or folder this user may not write (4de3648) told them to take
// it over with `sudo chown -R "$(id -un)" PATH` wherever it was another user's: with HOME a folder
// not theirs (sudo -u keeping HOME, a container run as a user with HOME=/) that was the whole
// home, or /; and PATH was pasted unquoted, so a space in it (macOS's Application Support) made
// two paths of it. Now taking it back is offered only below a home of the person's own, on its
// disk, and the path is one shell word; elsewhere they are told to set HOME or to run as that
// user. These run setup as another user (setpriv), so only where root can.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, lchown, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homePerTest, SETUP_CLI } from './setup-run.js';

const home = homePerTest('engage-review40-access-');
const KEY = 'eng_live_40acce55acce55acce55acce55';
const USER = 4242;
const canSwitchUser = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv');

/** Setup run as USER with HOME at `homeDir` and these extra flags, the key on stdin. */
function setupAsUser(homeDir: string, extra: string[]): { status: number | null; stderr: string } {
  const args = ['--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes', ...extra];
  const run = spawnSync('/usr/bin/setpriv', [`--reuid=${USER}`, `--regid=${USER}`, '--clear-groups', process.execPath, SETUP_CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: homeDir },
    cwd: '/',
    input: `${KEY}\n`,
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr };
}

describe.skipIf(!canSwitchUser)('taking back a file or folder is offered only where it can be the person’s', () => {
  it('a HOME that is not theirs is not offered to chown -R: they are told to set HOME', async () => {
    // The home stays root's, open to look in as homes are: USER runs with another's HOME.
    await chmod(home.dir, 0o755);
    const ran = setupAsUser(home.dir, ['--host', 'claude-code']);
    expect(ran.status).toBe(1);
    expect(ran.stderr).not.toContain('chown');
    expect(ran.stderr).toContain(
      `${home.dir} belongs to another user (uid 0), and is not inside a home folder of yours: if HOME is not your own home, set it to yours`,
    );
    expect(await readdir(home.dir)).toEqual([]);
  });

  it('a home of root’s closed to them: the home is named, not a file in it they cannot see', async () => {
    const ran = setupAsUser(home.dir, ['--host', 'claude-code']);
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(`${home.dir} belongs to another user (uid 0), and is not inside a home folder of yours`);
  });

  it('a folder of root’s closed to them in their own home: that folder is to be taken back', async () => {
    await chown(home.dir, USER, USER);
    await mkdir(join(home.dir, '.cursor'), { mode: 0o700 });
    const ran = setupAsUser(home.dir, ['--host', 'cursor']);
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain(`take it back (sudo chown -R "$(id -un)" ${join(home.dir, '.cursor')}), then run again.`);
  });

  it('a folder of root’s below their own home, its name with a space and a quote: one shell word', async () => {
    await chown(home.dir, USER, USER);
    const folder = join(home.dir, 'Application Support', "it's $HOME");
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'mcp.json'), '{}\n');
    const ran = setupAsUser(home.dir, ['--host', 'cursor', '--config-path', join(folder, 'mcp.json')]);
    expect(ran.status).toBe(1);
    const word = `'${folder.replace("'", "'\\''")}'`;
    expect(ran.stderr).toContain(`take it back (sudo chown -R "$(id -un)" ${word}), then run again.`);
    // The word, as a shell reads it, is the folder itself.
    const echoed = spawnSync('/bin/sh', ['-c', `printf %s ${word}`], { encoding: 'utf8' });
    expect(echoed.stdout).toBe(folder);
  });

  it('a link in their home to a file of root’s is not offered to chown, which would follow it', async () => {
    await chown(home.dir, USER, USER);
    const system = await mkdtemp(join(tmpdir(), 'engage-review40-access-etc-'));
    try {
      // Open to look in, as /etc is; the file root's only.
      await chmod(system, 0o755);
      await writeFile(join(system, 'shadow.json'), '{}\n', { mode: 0o600 });
      await mkdir(join(home.dir, '.cursor'));
      await chown(join(home.dir, '.cursor'), USER, USER);
      const link = join(home.dir, '.cursor', 'mcp.json');
      await symlink(join(system, 'shadow.json'), link);
      await lchown(link, USER, USER);
      const ran = setupAsUser(home.dir, ['--host', 'cursor']);
      expect(ran.status).toBe(1);
      expect(ran.stderr).not.toContain('chown');
      expect(ran.stderr).toContain(`${link} belongs to another user (uid 0), and is not inside a home folder of yours`);
    } finally {
      await rm(system, { recursive: true, force: true });
    }
  });

  it('a file of root’s on another disk mounted in their home is not offered to chown', async (context) => {
    await chown(home.dir, USER, USER);
    const mount = join(home.dir, 'mnt');
    await mkdir(mount);
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'mode=0755', 'none', mount]);
    // Root in a container may not mount: nothing to try then.
    if (mounted.status !== 0) context.skip();
    try {
      const ran = setupAsUser(home.dir, ['--host', 'cursor', '--config-path', join(mount, 'mcp.json')]);
      expect(ran.status).toBe(1);
      expect(ran.stderr).not.toContain('chown');
      expect(ran.stderr).toContain(`${mount} belongs to another user (uid 0), and is not inside a home folder of yours`);
    } finally {
      spawnSync('umount', [mount]);
    }
  });
});
