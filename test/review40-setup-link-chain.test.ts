// Review 40, setup run as root in another user's home checked each link named on the config's path
// (12a552e), but not the links those lead to: ~/.cursor/mcp.json a link root made (a provisioning
// script linking in the user's dotfiles) to ~/dotfiles/mcp.json, which the user then made a link to
// a file of root's, had root write our servers and the key into root's file, its mode made 0600
// and a backup beside it; so did a `..` after a user's link in --config-path, which the check took
// lexically. Now every link the path is resolved through is held to the rule. Only root can give a
// file away, so these run only as root; elsewhere they are skipped.
import { chown, lchown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPathIn, setupWith, setupWithKey } from './setup-run.js';

const KEY = 'sk_live_40c4a1ac4a1ac4a1ac4a1a';
const USER = 4242;
const asRoot = process.getuid?.() === 0;
const ROOTS_FILE = '{"log-driver": "json-file"}\n';

let home: string;
/** A folder of root's outside the home, as /etc is. */
let system: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review40-chain-home-'));
  system = await mkdtemp(join(tmpdir(), 'engage-review40-chain-etc-'));
  await chown(home, USER, USER);
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(system, { recursive: true, force: true });
});

/** A folder under the home, the user's. */
async function usersFolder(name: string): Promise<string> {
  const folder = join(home, name);
  await mkdir(folder);
  await chown(folder, USER, USER);
  return folder;
}

describe.skipIf(!asRoot)('setup run by root follows no user’s link met on the way, however it is reached', () => {
  it('refuses a link root made that leads to a user’s link to a file of root’s', async () => {
    const rootsFile = join(system, 'daemon.json');
    await writeFile(rootsFile, ROOTS_FILE, { mode: 0o644 });
    const dotfile = join(await usersFolder('dotfiles'), 'mcp.json');
    await symlink(rootsFile, dotfile);
    await lchown(dotfile, USER, USER);
    await usersFolder('.cursor');
    // Root's link, as a provisioning script leaves it.
    await symlink(dotfile, configPathIn(home, 'cursor'));
    const ran = await setupWithKey(home, 'cursor', KEY);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`leads through ${dotfile}, a symbolic link of user ${USER} to ${rootsFile}`);
    expect(await readFile(rootsFile, 'utf8')).toBe(ROOTS_FILE);
    expect((await stat(rootsFile)).mode & 0o777).toBe(0o644);
    expect(await readdir(system)).toEqual(['daemon.json']);
  });

  it('refuses a .. after a user’s link to a folder of root’s, as the system takes it', async () => {
    await mkdir(join(system, 'docker'));
    await writeFile(join(system, 'daemon.json'), ROOTS_FILE);
    const projects = await usersFolder('projects');
    const link = join(projects, 'etc');
    await symlink(join(system, 'docker'), link);
    await lchown(link, USER, USER);
    // Lexically <home>/projects/daemon.json, which is not there; the system reads <system>/daemon.json.
    const args = ['--host', 'cursor', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-stdin', '--yes'];
    const ran = await setupWith(home, [...args, '--config-path', `${link}/../daemon.json`], `${KEY}\n`);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('setup does not follow it');
    expect(await readFile(join(system, 'daemon.json'), 'utf8')).toBe(ROOTS_FILE);
    expect(await readdir(system)).toEqual(['daemon.json', 'docker']);
  });

  it('follows a link root made to a user’s link to the user’s own file', async () => {
    const dotfiles = await usersFolder('dotfiles');
    const own = join(dotfiles, 'cursor-mcp.json');
    await writeFile(own, '{"mcpServers": {}}\n');
    await chown(own, USER, USER);
    const dotfile = join(dotfiles, 'mcp.json');
    await symlink('cursor-mcp.json', dotfile);
    await lchown(dotfile, USER, USER);
    await usersFolder('.cursor');
    await symlink(dotfile, configPathIn(home, 'cursor'));
    const ran = await setupWithKey(home, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await readFile(own, 'utf8')).toContain('engage-contact');
    expect((await stat(own)).uid).toBe(USER);
  });
});
