// Setup run as root in another user's home (`sudo npx @engage-mcp/setup` where sudo keeps HOME, as
// macOS's does, or a provisioning script): the config it rewrote became root's, mode 0600, so the
// user's own host could no longer read its config at all (every server gone, not only ours), and a
// folder it made was root's too, where the host could not write. Files and folders it makes now
// belong to whoever owns the file it replaces, or the folder they are made in. Only root can give
// a file away, so these run only as root (the sandbox of this review); elsewhere they are skipped.
import { chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPathIn, setupWithKey } from './setup-run.js';

const KEY = 'sk_live_4b1d7e2a9c3f5e8a0d6b';
/** Someone other than root: any id will do, root may give files to it. */
const USER = 4242;
const GROUP = 4343;
const asRoot = process.getuid?.() === 0;

let home: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-setup-owner-'));
  await chown(home, USER, GROUP);
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const ownerOf = async (path: string) => {
  const { uid, gid } = await stat(path);
  return { uid, gid };
};

describe.skipIf(!asRoot)('setup run by root in a home that is not root’s', () => {
  it('keeps the owner of the config it rewrites, and gives the backup to that owner too', async () => {
    const path = configPathIn(home, 'cursor');
    await mkdir(dirname(path));
    await chown(dirname(path), USER, GROUP);
    await writeFile(path, '{"mcpServers": {"other": {"command": "x"}}}\n', { mode: 0o644 });
    await chown(path, USER, GROUP);
    const ran = await setupWithKey(home, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toContain(KEY);
    expect(await ownerOf(path)).toEqual({ uid: USER, gid: GROUP });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const backups = (await readdir(dirname(path))).filter((name) => name.includes('.backup-'));
    expect(backups).toHaveLength(1);
    expect(await ownerOf(join(dirname(path), backups[0] as string))).toEqual({ uid: USER, gid: GROUP });
  });

  it('gives a new config, and the folders it makes for it, to the owner of the folder they are made in', async () => {
    const path = configPathIn(home, 'claude-desktop');
    const ran = await setupWithKey(home, 'claude-desktop', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toContain(KEY);
    for (const made of [path, dirname(path), dirname(dirname(path))]) expect(await ownerOf(made), made).toEqual({ uid: USER, gid: GROUP });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    // And nothing left behind that is root's (a lock, a temporary file).
    expect((await readdir(dirname(path))).sort()).toEqual(['claude_desktop_config.json']);
  });

  it("leaves root's own files root's", async () => {
    await chown(home, 0, 0);
    const path = configPathIn(home, 'gemini');
    const ran = await setupWithKey(home, 'gemini', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await ownerOf(path)).toEqual({ uid: 0, gid: 0 });
  });
});
