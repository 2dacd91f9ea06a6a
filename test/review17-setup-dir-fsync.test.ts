// Review 17, setup's atomic write: the new config was written beside the old one, synced and
// renamed over it, but the folder was never synced after the rename, so on some filesystems a
// crash right after could bring back the old file (or none) although setup said it was added.
// The folder is synced now; a platform that refuses to sync a folder (EINVAL, EISDIR, EPERM:
// some filesystems, Windows) must not fail the setup, as the file itself is already written.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** What happened to the files, in order: renames, and syncs of folders. */
const events: string[] = [];
/** A code the next folder sync fails with, as a platform refusing it would. */
let refuseFolderSync: string | undefined;

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    if (!(await handle.stat()).isDirectory()) return handle;
    const path = String(args[0]);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      if (refuseFolderSync) throw Object.assign(new Error(`${refuseFolderSync}: refused, fsync`), { code: refuseFolderSync });
      events.push(`sync folder ${path}`);
      return sync();
    };
    return handle;
  };
  const rename: typeof fs.rename = async (from, to) => {
    await fs.rename(from, to);
    events.push(`rename to ${String(to)}`);
  };
  return { ...fs, default: { ...fs, open, rename }, open, rename };
});

const { replaceConfig } = await import('../packages/setup/src/files.js');

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review17-fsync-'));
  events.length = 0;
  refuseFolderSync = undefined;
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('setup replaces a config durably', () => {
  it('syncs the folder after renaming the new file over the old one', async () => {
    const path = join(home, 'mcp.json');
    await writeFile(path, '{"mcpServers": {}}\n');
    const written = await replaceConfig(path, '{"mcpServers": {"engage-contact": {}}}\n', true, true);
    expect(await readFile(path, 'utf8')).toContain('engage-contact');
    const renamed = events.indexOf(`rename to ${written.path}`);
    expect(renamed).toBeGreaterThanOrEqual(0);
    expect(events.slice(renamed + 1)).toContain(`sync folder ${dirname(written.path)}`);
  });

  it('syncs the folder of a config written for the first time', async () => {
    const path = join(home, '.cursor', 'mcp.json');
    await replaceConfig(path, '{}\n', false, true);
    expect(events).toEqual([`rename to ${path}`, `sync folder ${dirname(path)}`]);
  });

  it.each(['EINVAL', 'EISDIR', 'EPERM'])('a folder sync refused with %s does not fail the setup, and the backup stays', async (code) => {
    refuseFolderSync = code;
    const path = join(home, 'settings.json');
    await writeFile(path, '{"theme": "dark"}\n');
    const written = await replaceConfig(path, '{"theme": "dark", "mcpServers": {}}\n', true, true);
    expect(await readFile(path, 'utf8')).toContain('mcpServers');
    expect(written.backup).toBeDefined();
    expect(await readFile(written.backup as string, 'utf8')).toBe('{"theme": "dark"}\n');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('another failure of the folder sync is reported, but the written config and its backup stay', async () => {
    refuseFolderSync = 'EIO';
    const path = join(home, 'settings.json');
    await writeFile(path, '{"theme": "dark"}\n');
    await expect(replaceConfig(path, '{"theme": "light"}\n', true, true)).rejects.toThrow(
      /settings.json was written \(the previous file is kept as .*\), but its folder could not be synced to disk \(EIO\)/,
    );
    expect(await readFile(path, 'utf8')).toBe('{"theme": "light"}\n');
    const backups = (await import('node:fs')).readdirSync(home).filter((name) => name.includes('.backup-'));
    expect(backups).toHaveLength(1);
  });
});
