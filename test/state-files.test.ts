// The file store kept every idempotency record (24 hours, each with the write's first answer) and
// every confirmed write's last attempt (30 minutes) inside state.json, which each turn of a write
// read, parsed, rewrote and synced whole, several times a write, under the lock all seven stdio
// servers share: each write cost more than the one before (an agent importing contacts with
// idempotency keys: 12.8 ms of server CPU a write over its first 100, 39.4 ms by its 500th, with
// state.json at 433 KB; `npx tsx /tmp/exp/writes_growth.ts <checkout> idem`, a throwaway driver).
// Each record and each write's attempt is a file of its own now (records/, writes/), so a write
// reads and rewrites only its own; state.json keeps the counters and the audit chain's head.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { SEND, stateDirFixture } from './state-dir-fixture.js';
import { GuardStateError } from '../shared/src/call/guard-store.js';
import { structuredOf, textOf } from './helpers.js';

const { root, stateDir, params, sends, files, channelOn } = stateDirFixture('state-files', '62812888');

describe('each write reads and rewrites only its own entry', () => {
  it('state.json stays the same size however many writes with idempotency keys went before', async () => {
    const dir = stateDir();
    const server = await channelOn(dir);
    try {
      const sizes: number[] = [];
      for (let n = 0; n < 30; n++) {
        const sent = await server.call(SEND, params(n), { idempotencyKey: `import-${n}` });
        expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
        sizes.push(statSync(join(dir, 'state.json')).size);
      }
      // The audit head's sequence number grows by a digit at 10; nothing else in it may grow.
      expect(sizes[29]! - sizes[10]!).toBe(0);
      expect(files(dir, 'records')).toHaveLength(30);
      // A repeat still answers the first answer and sends nothing.
      const before = sends();
      const again = await server.call(SEND, params(7), { idempotencyKey: 'import-7' });
      expect(textOf(again)).toMatch(/first answer is repeated below, and nothing was sent again/);
      expect(sends()).toBe(before);
    } finally {
      await server.close();
    }
  });

  it("a confirmed write's last attempt is a file of its own, and a new preview still warns of it", async () => {
    const dir = stateDir();
    const server = await channelOn(dir, 'all');
    try {
      const preview = await server.call(SEND, params(100));
      const sent = await server.call(SEND, params(100), { confirmationToken: structuredOf(preview).confirmationToken });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(files(dir, 'writes')).toHaveLength(1);
      expect(readFileSync(join(dir, 'state.json'), 'utf8')).not.toMatch(/"writes":\{"/);
      const again = await server.call(SEND, params(100));
      expect(textOf(again)).toMatch(/Warning: this server already sent exactly this channel\.whatsapp\.send at .*, and it was carried out\./);
    } finally {
      await server.close();
    }
  });
});

describe('state.json written by an earlier version', () => {
  it('its idempotency records and sent writes move to their own files and still hold: a repeat sends nothing', async () => {
    const dir = stateDir();
    // The earlier version's own state, as it wrote it: an idempotency key used and answered.
    const first = await channelOn(dir);
    const answered = await first.call(SEND, params(200), { idempotencyKey: 'order-200' });
    expect(structuredOf(answered).outcome).toBe('done');
    await first.close();
    const [file] = files(dir, 'records');
    const entry = JSON.parse(readFileSync(join(dir, 'records', file!), 'utf8')) as { name: string; value: unknown; expiresAt: number };
    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as Record<string, unknown>;
    rmSync(join(dir, 'records'), { recursive: true });
    writeFileSync(join(dir, 'state.json'), JSON.stringify({ ...state, records: { [entry.name]: { value: entry.value, expiresAt: entry.expiresAt } } }), {
      mode: 0o600,
    });

    const before = sends();
    const upgraded = await channelOn(dir);
    try {
      const again = await upgraded.call(SEND, params(200), { idempotencyKey: 'order-200' });
      expect(textOf(again)).toMatch(/first answer is repeated below, and nothing was sent again/);
      expect(sends()).toBe(before);
      expect(files(dir, 'records')).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')).records).toEqual({});
    } finally {
      await upgraded.close();
    }
  });
});

describe('an entry file the store cannot trust', () => {
  it('a damaged one refuses its own write, naming the file and what to do; other writes go on', async () => {
    const dir = stateDir();
    const server = await channelOn(dir);
    try {
      expect(structuredOf(await server.call(SEND, params(300), { idempotencyKey: 'k-300' })).outcome).toBe('done');
      const [file] = files(dir, 'records');
      const path = join(dir, 'records', file!);
      writeFileSync(path, '{"name":"k","value":{},"expiresAt":1e15}');
      const before = sends();
      const refused = await server.call(SEND, params(300), { idempotencyKey: 'k-300' });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`the guardrails' state file ${path} is damaged`);
      expect(textOf(refused)).toContain(`mv ${path} ${path}.damaged`);
      expect(sends()).toBe(before);
      expect(structuredOf(await server.call(SEND, params(301), { idempotencyKey: 'k-301' })).outcome).toBe('done');
    } finally {
      await server.close();
    }
  });

  it('a link planted in the place of an entry file is refused, not followed; a folder others may write is refused', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    await store.reserve('planted', { operationId: SEND, digest: 'd', at: 1 }, Date.now() + 60_000);
    const [file] = files(dir, 'records');
    const path = join(dir, 'records', file!);
    rmSync(path);
    symlinkSync(join(root, 'elsewhere'), path);
    await expect(store.reserve('planted', { operationId: SEND, digest: 'd', at: 1 }, Date.now() + 60_000)).rejects.toThrow(GuardStateError);
    expect(existsSync(join(root, 'elsewhere'))).toBe(false);
    rmSync(path);
    chmodSync(join(dir, 'records'), 0o777);
    await expect(store.lookup('planted')).rejects.toThrow(/can be written by others \(mode 0777\)/);
  });
});

describe('expired entries', () => {
  it('are removed by a later turn, with temporary files a crash left; live ones stay', async () => {
    const dir = stateDir();
    let now = Date.parse('2026-11-01T00:00:00Z');
    const store = new FileGuardStore(dir, undefined, () => now);
    await store.reserve('short', { operationId: SEND, digest: 'd', at: now }, now + 60_000);
    await store.reserve('long', { operationId: SEND, digest: 'd', at: now }, now + 24 * 60 * 60_000);
    expect(await store.claimWrite('w', 'owner', now, now)).toBeUndefined();
    await store.settleWrite('w', 'owner', 'done');
    writeFileSync(join(dir, 'records', 'left.json.123.abcd.tmp'), 'partial', { mode: 0o600 });
    // Odd things in the folder (none the store makes) hold up no turn: a folder and a link.
    mkdirSync(join(dir, 'records', 'odd.json'));
    symlinkSync(join(root, 'nowhere'), join(dir, 'records', 'linked.json'));
    const stale = new Date(Date.now() - 60 * 60_000);
    const { utimesSync } = await import('node:fs');
    utimesSync(join(dir, 'records', 'left.json.123.abcd.tmp'), stale, stale);
    expect(files(dir, 'records')).toHaveLength(5);

    now += 60 * 60_000; // an hour on: the short record and the write's attempt (30 minutes) are past
    const later = new FileGuardStore(dir, undefined, () => now);
    await later.take('counter', 1, 10, now + 60_000);
    // Left: the long record, and the folder and the link, which are not the store's to remove.
    expect(files(dir, 'records').filter((file) => !['odd.json', 'linked.json'].includes(file))).toHaveLength(1);
    expect(files(dir, 'records')).toHaveLength(3);
    expect(files(dir, 'writes')).toHaveLength(0);
    expect(await later.lookup('long')).toMatchObject({ operationId: SEND });
    expect(await later.lookup('short')).toBeUndefined();
  });
});
