// Review 42 (chaos "c2 w348": one confirmed write sent twice by two stdio servers on one state
// folder, after stdio servers were killed there). A lock left by a killed server is broken by
// moving it aside; the breaker then checked that what it moved was that stale lock by its inode
// alone. But the stale lock's file, once removed by another breaker, gives its inode to the next
// file made (ext4 does so at once), and that is the next owner's fresh lock: the breaker took the
// live lock for the stale one and removed it, and two processes took turns at once (two claims of
// the same write each found no mark in flight). Now the lock's owner (with its nonce) says which
// lock was moved, and the lock is read again just before it is moved. The other process's break
// and take are made to happen between the breaker's read and its rename, and the freed inode to
// be given again whatever the file system does.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

/** The lock path whose next rename has another process break the stale lock and take its own first. */
const race: { path?: string; holder?: string; staleId?: { dev: number; ino: number }; moved?: () => void } = {};

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const renameSync = ((from: string, to: string) => {
    if (race.path && String(from) === race.path && race.holder) {
      const holder = race.holder;
      race.holder = undefined;
      // Another process breaks the stale lock (moved aside, removed) and takes its own, as takeLock does.
      const stale = fs.lstatSync(race.path);
      race.staleId = { dev: stale.dev, ino: stale.ino };
      fs.unlinkSync(race.path);
      const beside = `${race.path}.other.tmp`;
      fs.writeFileSync(beside, holder, { mode: 0o600 });
      fs.linkSync(beside, race.path);
      fs.unlinkSync(beside);
      fs.renameSync(from, to);
      race.moved?.();
      return;
    }
    fs.renameSync(from, to);
  }) as typeof fs.renameSync;
  // The lock moved aside has the stale one's inode, as a file system that gives a freed inode again makes it.
  const lstatSync = ((path: string, options?: import('node:fs').StatSyncOptions) => {
    const stat = fs.lstatSync(path, options as never) as import('node:fs').Stats;
    if (race.staleId && String(path).includes('.stale-')) return Object.assign(Object.create(Object.getPrototypeOf(stat)), stat, race.staleId);
    return stat;
  }) as typeof fs.lstatSync;
  const wrapped = { ...fs, renameSync, lstatSync };
  return { ...wrapped, default: wrapped };
});

const { lock, readLock } = await import('../shared/src/call/state-lock.js');
const { ownStartAndPlace } = await import('../shared/src/call/process-place.js');
const { unlinkSync } = await import('node:fs');

const root = mkdtempSync(join(tmpdir(), 'review42-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a stale lock broken while another process breaks it and takes its own', () => {
  it("the other process's fresh lock, on the stale one's inode, is left in place: no two turns at once", async () => {
    const path = join(root, 'state.lock');
    // Left by a process that is gone: a pid no process can have (above Linux's highest), named as this host's.
    writeFileSync(path, `${2 ** 22 + 1} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`, { mode: 0o600 });
    // The other process is alive (this one, by another lock's nonce): its lock is never to be broken.
    const other = `${process.pid} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`;
    const moved = new Promise<void>((resolve) => {
      race.moved = resolve;
    });
    Object.assign(race, { path, holder: other });
    const taking = lock(path);
    // Should the expectation below fail, the test folder goes before this lock's next try: its failure then is no second one.
    taking.catch(() => undefined);
    await moved;
    // The breaker's turn is over (it waits for its next try): the other process's lock is still there, still its own.
    expect(readLock(path)?.holder).toBe(other);
    // The other process's turn ends; this one then takes the lock.
    unlinkSync(path);
    const release = await taking;
    expect(readLock(path)?.holder).not.toBe(other);
    release();
  });
});
