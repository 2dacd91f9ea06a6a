// Review 25b: files in the stdio servers' state directory that the servers did not write. A FIFO in
// records/ hung the whole server (a synchronous open waits for a writer: every call of every tool
// then timed out), at its own key's write or at the sweep of any turn; a file where records/ should
// be answered "Internal error"; an entry file of another user, or one others may write, was
// trusted. Each is now refused, naming the file and what to do, and the server goes on.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { structuredOf, textOf } from './helpers.js';

const { sandbox, stateDir, params, sends } = stateDirFixture('review25b-hostile', '62812558');

const fifo = (path: string) => execFileSync('mkfifo', ['-m', '600', path]);

describe('a real server over stdio', () => {
  it("a FIFO in place of a key's own record: that write is refused, naming it; other writes go, and a new server's sweep does not hang on it", {
    timeout: 90_000,
  }, async () => {
    const dir = stateDir();
    const server = await launchChannel(sandbox(), dir);
    try {
      expect(structuredOf(await callSend(server, { params: params(1), idempotencyKey: 'k-1' })).outcome).toBe('done');
      const [file] = readdirSync(join(dir, 'records'));
      const path = join(dir, 'records', file!);
      rmSync(path);
      fifo(path);
      fifo(join(dir, 'records', 'planted.json'));
      const before = sends();
      const refused = await callSend(server, { params: params(1), idempotencyKey: 'k-1' }, 15_000);
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`${path} is not a regular file`);
      expect(textOf(refused)).toMatch(/Move it aside \(mv .*\).*Nothing was sent/);
      expect(sends()).toBe(before);
      expect(structuredOf(await callSend(server, { params: params(2), idempotencyKey: 'k-2' }, 15_000)).outcome).toBe('done');
    } finally {
      await server.close();
    }
    // A new process sweeps the folder on its first turn.
    const next = await launchChannel(sandbox(), dir);
    try {
      expect(structuredOf(await callSend(next, { params: params(3), idempotencyKey: 'k-3' }, 15_000)).outcome).toBe('done');
    } finally {
      await next.close();
    }
  });

  it('a file where records/ should be: refused, saying what it is and how to move it aside; nothing is sent', async () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'records'), 'not a folder', { mode: 0o600 });
    const server = await launchChannel(sandbox(), dir);
    try {
      const before = sends();
      const refused = await callSend(server, { params: params(4), idempotencyKey: 'k-4' });
      expect(textOf(refused)).toMatch(/the state directory .*records is not a directory\. Move it aside \(mv .*records .*records\.damaged\).*Nothing was sent/);
      expect(sends()).toBe(before);
    } finally {
      await server.close();
    }
  });
});

describe('an entry file the store did not write', () => {
  const record = { operationId: 'x', digest: 'd', at: 1 };

  it('one others may write is refused, with the chmod that tightens it', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    await store.reserve('loose', record, Date.now() + 60_000);
    const [file] = readdirSync(join(dir, 'records'));
    chmodSync(join(dir, 'records', file!), 0o666);
    await expect(store.lookup('loose')).rejects.toThrow(/can be written by others \(mode 0666\).*chmod 600/);
  });

  it('one far larger than any the store writes (a sparse 100 MB file) is refused unread, naming its size', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    await store.reserve('huge', record, Date.now() + 60_000);
    const [file] = readdirSync(join(dir, 'records'));
    truncateSync(join(dir, 'records', file!), 100 * 1024 * 1024);
    await expect(store.lookup('huge')).rejects.toThrow(/is far larger \(104857600 bytes\) than any the servers write, so it is not read\. Move it aside/);
    // Other keys go on.
    expect(await store.reserve('fine', record, Date.now() + 60_000)).toBeUndefined();
  });

  it.skipIf(process.getuid?.() !== 0)("one of another user's is refused, not trusted", async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    await store.reserve('theirs', record, Date.now() + 60_000);
    const [file] = readdirSync(join(dir, 'records'));
    chownSync(join(dir, 'records', file!), 1234, 1234);
    await expect(store.lookup('theirs')).rejects.toThrow(/belongs to another user \(uid 1234\)/);
  });
});
