// Review 25b: the lock every turn of the stdio servers' state directory takes. An empty lock file (a
// process killed between creating it and writing its owner; a disk full at that moment) was
// waited on as if a live process held it, for 30 seconds: every write of every server failed
// ("locked by another process") meanwhile. A FIFO or a directory at its place hung or blocked
// every turn. A lock now appears with its owner already in it (linked into place), so an empty or
// unreadable one is nobody's and is broken a moment after it is seen; one that is not a file is
// refused, naming it. Real processes show two live ones never hold it at once.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { structuredOf, textOf } from './helpers.js';

const { sandbox, stateDir, params, sends, takerScript } = stateDirFixture('review25b-lock', '62812557');

describe('a lock file nobody holds', () => {
  it('an empty one (its process killed before it wrote its owner): the next write goes, once', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'state.lock'), '', { mode: 0o600 });
    const server = await launchChannel(sandbox(), dir);
    try {
      const before = sends();
      const sent = await callSend(server, { params: params(1), idempotencyKey: 'after-empty-lock' });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
      const again = await callSend(server, { params: params(1), idempotencyKey: 'after-empty-lock' });
      expect(textOf(again)).toMatch(/nothing was sent again/);
      expect(sends()).toBe(before + 1);
    } finally {
      await server.close();
    }
  });

  it('a FIFO, a folder or a link to /dev/zero in its place: refused, naming it and how to remove it; the server goes on', { timeout: 90_000 }, async () => {
    for (const plant of ['fifo', 'folder', 'link'] as const) {
      const dir = stateDir();
      const lock = join(dir, 'state.lock');
      if (plant === 'fifo') execFileSync('mkfifo', ['-m', '600', lock]);
      if (plant === 'folder') mkdirSync(lock);
      if (plant === 'link') symlinkSync('/dev/zero', lock);
      const server = await launchChannel(sandbox(), dir);
      try {
        const before = sends();
        const refused = await callSend(server, { params: params(2), idempotencyKey: `planted-${plant}` }).catch((error: unknown) => ({
          isError: true,
          content: [{ type: 'text', text: String(error) }],
        }));
        expect(refused.isError, `${plant}: ${textOf(refused as never)}`).toBe(true);
        expect(textOf(refused as never), plant).toMatch(/state\.lock .*(is not a file the servers made|is a symbolic link).*Remove it|Remove the link/);
        expect(textOf(refused as never), plant).toMatch(/Nothing was sent/);
        expect(sends()).toBe(before);
        // A write that takes no turn before it is sent (no key, no cap, no yes) is refused too: its audit line could not be written.
        const unkeyed = await callSend(server, { params: params(3) }, 15_000);
        expect(textOf(unkeyed), plant).toMatch(/state\.lock .*(is not a file the servers made|is a symbolic link).*Nothing was sent/);
        expect(sends()).toBe(before);
        // Still answering: a read goes.
        const read = await server.client.listTools();
        expect(read.tools.length).toBeGreaterThan(0);
      } finally {
        await server.close();
      }
    }
  });
});

describe('two live processes never hold the lock at once', () => {
  /** Real processes each taking a counter `turns` times; an update lost to two holders shows as a count short. */
  function taker(dir: string, turns: number): Promise<number> {
    const script = takerScript();
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, String(turns)], { stdio: ['ignore', 'ignore', 'inherit'] });
    return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  }

  it('four processes taking turns while empty locks are planted now and then: every turn counted once', { timeout: 120_000 }, async () => {
    const dir = stateDir();
    const lock = join(dir, 'state.lock');
    let planted = 0;
    let running = true;
    // Empty locks appear (as a process killed at the wrong moment leaves them) while the four work.
    const planting = (async () => {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        if (!running) return;
        try {
          writeFileSync(lock, '', { flag: 'wx', mode: 0o600 });
          planted++;
        } catch {
          // A live process holds it now.
        }
      }
    })();
    const codes = await Promise.all(Array.from({ length: 4 }, () => taker(dir, 150)));
    running = false;
    await planting;
    expect(codes).toEqual([0, 0, 0, 0]);
    expect(planted).toBeGreaterThan(0);
    expect(await new FileGuardStore(dir).count('c')).toBe(600);
    expect(readdirSync(dir).filter((file) => file.startsWith('state.lock.') && file.endsWith('.tmp'))).toEqual([]);
    // A lock planted after the last turn is nobody's either: the next turn takes it over.
    expect(await new FileGuardStore(dir).take('c', 1, 1e9, Date.now() + 60_000)).toEqual({ taken: true, count: 601 });
  });
});
