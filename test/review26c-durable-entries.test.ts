// Review 26c: an idempotency record (and a confirmed write's claim) was written beside, synced and
// renamed into records/ (writes/), but the folder was never synced after the rename: on ext4 the
// rename reaches the disk with the next journal commit, up to 5 seconds later, so a power loss
// just after the write was sent could take the record back, and after the reboot the repeat with
// the same key was sent again. The folder is now synced after each entry's rename (best effort: a
// platform that cannot sync a folder refuses nothing). The syscalls are what shows it: a power loss
// cannot be made in a test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

/** What happened to the files, in order: renames, and syncs of folders. */
const events: string[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const folders = new Map<number, string>();
  const openSync = ((path: import('node:fs').PathLike, flags: import('node:fs').OpenMode = 'r', mode?: import('node:fs').Mode | null) => {
    const fd = fs.openSync(path, flags, mode);
    folders.set(fd, String(path));
    return fd;
  }) as typeof fs.openSync;
  const fsyncSync = ((fd: number) => {
    fs.fsyncSync(fd);
    if (fs.fstatSync(fd).isDirectory()) events.push(`sync folder ${folders.get(fd)}`);
  }) as typeof fs.fsyncSync;
  const renameSync = ((from: string, to: string) => {
    fs.renameSync(from, to);
    events.push(`rename to ${String(to)}`);
  }) as typeof fs.renameSync;
  const wrapped = { ...fs, openSync, fsyncSync, renameSync };
  return { ...wrapped, default: wrapped };
});

const { FileGuardStore } = await import('../shared/src/call/file-guard-store.js');

const root = mkdtempSync(join(tmpdir(), 'review26c-durable-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Whether the folder was synced after the last rename of a file into it. */
function syncedAfterRename(folder: string): boolean {
  const renamed = events.findLastIndex((event) => event.startsWith(`rename to ${folder}/`));
  return renamed >= 0 && events.slice(renamed + 1).includes(`sync folder ${folder}`);
}

describe('an entry written into its folder', () => {
  it("an idempotency key's reservation, its first answer, and a confirmed write's claim: the folder is synced after the rename", async () => {
    const dir = mkdtempSync(join(root, 'dir-'));
    const store = new FileGuardStore(dir);
    const now = Date.now();
    events.length = 0;
    expect(await store.reserve('k', { operationId: 'channel.whatsapp.send', digest: 'd', at: now }, now + 60_000)).toBeUndefined();
    expect(syncedAfterRename(join(dir, 'records'))).toBe(true);
    events.length = 0;
    await store.settle('k', { content: [{ type: 'text', text: 'done' }] });
    expect(syncedAfterRename(join(dir, 'records'))).toBe(true);
    events.length = 0;
    expect(await store.claimWrite('w', 'owner', now, now)).toBeUndefined();
    expect(syncedAfterRename(join(dir, 'writes'))).toBe(true);
  });
});
