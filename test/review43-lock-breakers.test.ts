// Review 43 (the window review42-w348 left): two breakers of one stale lock. Breaker A read the
// stale lock L and was paused before moving it aside; meanwhile breaker B broke L and process C took
// a fresh lock. A then moved C's lock aside, saw it was not L and linked it back, but in between
// process D found no lock and took one: C and D held turns at once (a stress probe, bench/lock-stress.ts,
// saw 10 to 23 such overlaps in 1,800 turns). Breakers now take turns (the folder `state.lock.break`),
// so B cannot break L while A is breaking it. Each process here is a call of lock() in this process
// (a live owner, by its own nonce), B, C and D made to try just as A moves the lock, and D just
// before A would put a lock back; every turn then holds the lock a moment, counting who else holds it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

/** Called (once each) as the lock at `path` is moved aside, and as a lock moved aside is put back. */
const hooks: { path?: string; beforeMove?: () => void; beforePutBack?: () => void } = {};

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const renameSync = ((from: string, to: string) => {
    if (hooks.path && String(from) === hooks.path && hooks.beforeMove) {
      const hook = hooks.beforeMove;
      hooks.beforeMove = undefined;
      hook();
    }
    fs.renameSync(from, to);
  }) as typeof fs.renameSync;
  const linkSync = ((from: string, to: string) => {
    if (hooks.path && String(to) === hooks.path && String(from).includes('.stale-') && hooks.beforePutBack) {
      const hook = hooks.beforePutBack;
      hooks.beforePutBack = undefined;
      hook();
    }
    fs.linkSync(from, to);
  }) as typeof fs.linkSync;
  const wrapped = { ...fs, renameSync, linkSync };
  return { ...wrapped, default: wrapped };
});

const { lock } = await import('../shared/src/call/state-lock.js');
const { ownStartAndPlace } = await import('../shared/src/call/process-place.js');

const root = mkdtempSync(join(tmpdir(), 'review43-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('two breakers of one stale lock', () => {
  it('a breaker paused before its move cannot move a lock taken since: one turn at a time, and every process gets its turn', async () => {
    const path = join(root, 'state.lock');
    // L, left by a process that is gone: a pid no process can have (above Linux's highest), named as this host's.
    writeFileSync(path, `${2 ** 22 + 1} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`, { mode: 0o600 });
    const holding = new Set<string>();
    let most = 0;
    const turns: Promise<void>[] = [];
    /** A process's turn: lock() tries once at once (takes, or breaks a stale lock), then holds its turn a moment. */
    const turn = (name: string) => {
      const taken = lock(path);
      turns.push(
        taken.then(async (release) => {
          holding.add(name);
          most = Math.max(most, holding.size);
          await new Promise((resolve) => setTimeout(resolve, 30));
          holding.delete(name);
          release();
        }),
      );
    };
    hooks.path = path;
    hooks.beforeMove = () => {
      turn('B');
      turn('C');
    };
    hooks.beforePutBack = () => turn('D');
    turn('A');
    // No lock was put back (A moved only L): D comes after.
    if (turns.length < 4) turn('D');
    await Promise.all(turns);
    expect(turns).toHaveLength(4);
    expect(most).toBe(1);
    // Nothing of the breakers is left: no lock moved aside, no temporary file, no breaker's entry.
    expect(readdirSync(root).filter((file) => file.endsWith('.tmp') || file.includes('.stale-'))).toEqual([]);
    expect(readdirSync(`${path}.break`)).toEqual([]);
  });
});
