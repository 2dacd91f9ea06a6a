// Review 39, setup on a full disk: a file setup made but could not fill (its lock, a backup) was
// left behind, empty. An empty lock names no run, so the next run, the disk freed, waited 15
// seconds and said another engage-mcp-setup was changing the file; an empty backup stood for the
// file it was to keep. And the message was the system's alone ("ENOSPC: no space left on device,
// write"), not saying whether the config was changed or what to do. Now what could not be filled is
// removed, and the message says the disk is full, that nothing was changed, and to free space.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

/** Files whose name includes this are refused their bytes, as a full disk refuses them. */
let fullFor: string | undefined;

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof fs.open = async (...args) => {
    const handle = await fs.open(...args);
    if (fullFor !== undefined && String(args[0]).includes(fullFor)) {
      handle.writeFile = async () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      };
    }
    return handle;
  };
  return { ...fs, default: { ...fs, open }, open };
});

const { replaceConfig, withConfigLock } = await import('../packages/setup/src/files.js');

const ORIGINAL = '{"mcpServers": {"mine": {"command": "x"}}}\n';
const MERGED = '{"mcpServers": {"mine": {"command": "x"}, "engage-contact": {}}}\n';

let home: string;
let path: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review39-full-'));
  path = join(home, 'mcp.json');
  await writeFile(path, ORIGINAL);
  fullFor = undefined;
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const writeMerged = () => withConfigLock(path, () => replaceConfig(path, MERGED, true, true));

describe('a full disk', () => {
  it('leaves no lock behind, so the next run, space freed, writes at once', async () => {
    fullFor = '.engage-setup.lock';
    await expect(writeMerged()).rejects.toThrow(
      `${path} cannot be written (ENOSPC): its disk is full: free some space on it, then run again. Nothing was changed.`,
    );
    expect(await readdir(home)).toEqual(['mcp.json']);
    fullFor = undefined;
    await writeMerged();
    expect(await readFile(path, 'utf8')).toBe(MERGED);
  });

  it('leaves no empty backup behind, the file as it was', async () => {
    fullFor = '.backup-';
    await expect(writeMerged()).rejects.toThrow('cannot be written (ENOSPC): its disk is full');
    expect(await readdir(home)).toEqual(['mcp.json']);
    expect(await readFile(path, 'utf8')).toBe(ORIGINAL);
  });

  it('says what happened when the new text cannot be written', async () => {
    fullFor = '.engage-setup-';
    await expect(writeMerged()).rejects.toThrow('Nothing was changed.');
    expect(await readdir(home)).toEqual(['mcp.json']);
    expect(await readFile(path, 'utf8')).toBe(ORIGINAL);
  });
});
