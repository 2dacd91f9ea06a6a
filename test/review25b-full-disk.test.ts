// Review 25b: a full disk under the stdio servers' state directory. A state file's write that failed
// (ENOSPC) left its temporary file behind (swept only 10 minutes later) and the model was told of an
// "Internal error"; a write cut short (a disk nearly full takes part of it) was renamed into place
// whole-looking but cut, and read as damaged from then on. Now a failed write leaves no temporary
// file, what is written is written whole or not at all, and the call is refused saying the state
// could not be saved and that nothing was sent: a confirmed write whose in-flight mark could not be
// saved is never sent.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { GuardStateError } from '../shared/src/call/guard-store.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { smallDisk } from './helpers/small-disk.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { structuredOf, textOf } from './helpers.js';

/** What node:fs's writeSync does in this file's store: normally the real one. */
const faults = vi.hoisted(() => ({ write: undefined as ((fd: number, buffer: Buffer, offset: number, length: number) => number) | undefined }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((...args: Parameters<typeof real.writeSync>) => {
    const [fd, data] = args;
    if (!faults.write) return real.writeSync(...args);
    if (typeof data === 'string') return faults.write(fd, Buffer.from(data), 0, Buffer.byteLength(data));
    return faults.write(fd, data as Buffer, Number(args[2] ?? 0), Number(args[3] ?? (data as Buffer).length));
  }) as typeof real.writeSync;
  return { ...real, default: { ...real, writeSync }, writeSync };
});
const realFs = await vi.importActual<typeof import('node:fs')>('node:fs');

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review25b-disk', '62812556');

/** Every temporary file in the state directory and its folders. */
const leftovers = (dir: string) =>
  [dir, join(dir, 'records'), join(dir, 'writes')].flatMap((folder) => {
    try {
      return readdirSync(folder).filter((file) => file.endsWith('.tmp'));
    } catch {
      return [];
    }
  });

describe("a state file's write that fails or is cut short", () => {
  it('ENOSPC: refused as state that could not be saved, and no temporary file is left', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    const record = { operationId: 'x', digest: 'd', at: 1 };
    await store.reserve('first', record, Date.now() + 60_000);
    // The lock's owner (a few bytes) still fits; the entry's file does not.
    faults.write = (fd, buffer, offset, length) => {
      if (/^\d+ \S+ [0-9a-f]{12}$/.test(buffer.toString('utf8', offset, offset + length))) return realFs.writeSync(fd, buffer, offset, length);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    try {
      await expect(store.reserve('second', record, Date.now() + 60_000)).rejects.toThrow(GuardStateError);
      await expect(store.reserve('second', record, Date.now() + 60_000)).rejects.toThrow(/could not be saved in .*no space left on its disk, ENOSPC/);
    } finally {
      faults.write = undefined;
    }
    expect(leftovers(dir)).toEqual([]);
    expect(await store.lookup('second')).toBeUndefined();
    expect(await store.reserve('second', record, Date.now() + 60_000)).toBeUndefined();
  });

  it('a write that takes only part of the text: the rest is written on, and the entry reads whole', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    faults.write = (fd, buffer, offset, length) => realFs.writeSync(fd, buffer, offset, Math.min(length, 7));
    try {
      await store.reserve('cut', { operationId: 'x', digest: 'd'.repeat(200), at: 1 }, Date.now() + 60_000);
      await store.take('counter', 1, 10, Date.now() + 60_000);
    } finally {
      faults.write = undefined;
    }
    expect(await store.lookup('cut')).toMatchObject({ digest: 'd'.repeat(200) });
    expect(await store.count('counter')).toBe(1);
  });
});

const disk = smallDisk(join(root, 'disk'));
afterAll(() => disk?.unmount());

describe.skipIf(!disk)('a real server over stdio, its state directory on a disk that fills up (a tmpfs)', () => {
  it('a confirmed write whose in-flight mark cannot be saved is not sent, the model is told why, and after space is freed it goes once', async () => {
    const dir = join(disk!.path, 'state');
    const server = await launchChannel(sandbox(), dir, 'all');
    try {
      const preview = await callSend(server, { params: params(1) });
      expect(structuredOf(preview).outcome, textOf(preview)).toBe('preview');
      // Room for the lock file and nothing more: the mark in writes/ is the write that fails.
      disk!.fill(1);
      const before = sends();
      const refused = await callSend(server, { params: params(1), confirmationToken: structuredOf(preview).confirmationToken });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/the guardrails' state could not be saved in .*no space left on its disk, ENOSPC\).*Nothing was sent/);
      expect(sends()).toBe(before);
      expect(leftovers(dir)).toEqual([]);

      disk!.free();
      const again = await callSend(server, { params: params(1) });
      const sent = await callSend(server, { params: params(1), confirmationToken: structuredOf(again).confirmationToken });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
    } finally {
      disk!.free();
      await server.close();
    }
  });

  it('a disk with no room even for the lock: refused the same, and no empty lock is left to hold every later turn', { timeout: 60_000 }, async () => {
    const dir = join(disk!.path, 'state-0');
    const server = await launchChannel(sandbox(), dir);
    try {
      expect(structuredOf(await callSend(server, { params: params(2), idempotencyKey: 'first' })).outcome).toBe('done');
      disk!.fill(0);
      const before = sends();
      const refused = await callSend(server, { params: params(3), idempotencyKey: 'second' });
      expect(textOf(refused)).toMatch(/the guardrails' state could not be saved in .*ENOSPC\).*Nothing was sent/);
      expect(sends()).toBe(before);
      expect(readdirSync(dir).filter((file) => file.startsWith('state.lock'))).toEqual([]);
      disk!.free();
      const sent = await callSend(server, { params: params(3), idempotencyKey: 'second' });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
    } finally {
      disk!.free();
      await server.close();
    }
  });
});
