// Review 39, setup run as root in another user's home (sudo keeping HOME, a provisioning script)
// followed that user's symbolic links: ~/.cursor/mcp.json made a link to a file of root's
// (/etc/docker/daemon.json, say) had root write our servers and the key into it, its mode made
// 0600 and a backup beside it. The user chooses the file; root rewrites it. Now a link a user made
// to something not theirs is not followed, on the file or a folder on its way, and nothing is
// written; a link to the user's own file (dotfiles) is followed as before. Only root can give a
// file away, so these run only as root; elsewhere they are skipped.
import { chown, lchown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPathIn, setupWithKey } from './setup-run.js';

const KEY = 'sk_live_39a7c2e9b4d1f6a8c3e5';
/** Someone other than root: any id will do, root may give files to it. */
const USER = 4242;
const asRoot = process.getuid?.() === 0;
const ROOTS_FILE = '{"log-driver": "json-file"}\n';

let home: string;
/** A folder of root's outside the home, as /etc is. */
let system: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review39-links-home-'));
  system = await mkdtemp(join(tmpdir(), 'engage-review39-links-etc-'));
  await chown(home, USER, USER);
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(system, { recursive: true, force: true });
});

/** `link` made by the user, pointing at `target`. */
async function usersLink(target: string, link: string): Promise<void> {
  await symlink(target, link);
  await lchown(link, USER, USER);
}

/** The cursor config folder, made by the user. */
async function usersCursorFolder(): Promise<string> {
  const path = configPathIn(home, 'cursor');
  await mkdir(dirname(path));
  await chown(dirname(path), USER, USER);
  return path;
}

describe.skipIf(!asRoot)("setup run by root follows no user's link to a file not theirs", () => {
  it('refuses a config that is a link to a file of root’s, which stays as it was', async () => {
    const rootsFile = join(system, 'daemon.json');
    await writeFile(rootsFile, ROOTS_FILE, { mode: 0o644 });
    await usersLink(rootsFile, await usersCursorFolder());
    const ran = await setupWithKey(home, 'cursor', KEY);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('setup does not follow it');
    expect(ran.stderr).toContain('Nothing was changed.');
    expect(await readFile(rootsFile, 'utf8')).toBe(ROOTS_FILE);
    expect((await stat(rootsFile)).mode & 0o777).toBe(0o644);
    expect(await readdir(system)).toEqual(['daemon.json']);
  });

  it('refuses a config folder that is a link to a folder of root’s', async () => {
    await writeFile(join(system, 'mcp.json'), ROOTS_FILE);
    await usersLink(system, join(home, '.cursor'));
    const ran = await setupWithKey(home, 'cursor', KEY);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('setup does not follow it');
    expect(await readFile(join(system, 'mcp.json'), 'utf8')).toBe(ROOTS_FILE);
    expect(await readdir(system)).toEqual(['mcp.json']);
  });

  it('follows a link to a file of the user’s own, as from a dotfiles folder', async () => {
    const dotfiles = join(home, 'dotfiles');
    await mkdir(dotfiles);
    await chown(dotfiles, USER, USER);
    const own = join(dotfiles, 'cursor-mcp.json');
    await writeFile(own, '{"mcpServers": {}}\n');
    await chown(own, USER, USER);
    await usersLink(own, await usersCursorFolder());
    const ran = await setupWithKey(home, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await readFile(own, 'utf8')).toContain('engage-contact');
    expect((await stat(own)).uid).toBe(USER);
  });
});
