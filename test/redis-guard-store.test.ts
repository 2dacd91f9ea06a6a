// The guardrails' Redis store (remote mode), against a real redis-server: the Lua scripts' edge
// cases, idempotency records, the audit chain kept by two replicas at once, and failing closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { type AuditEntry, remoteAuditSecret, verifyAuditLines } from '../shared/src/call/audit.js';
import { InputError } from '../shared/src/model/errors.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { auditListKey, GUARD_STORE_UNAVAILABLE, RedisGuardStore, WRITE_CLOCK_SKEW_MS } from '../packages/http/src/redis-guard-store.js';
import { WRITE_MARK_LEASE_MS } from '../shared/src/call/shared-mark.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');
const HOUR = 60 * 60 * 1000;
let redis: RedisServer;
let client: RedisClient;
let other: RedisClient;
let store: RedisGuardStore;
let counterNumber = 0;
const freshCounter = () => `messages:key-fingerprint:${++counterNumber}`;

beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url);
  other = await connectRedis(redis.url);
  store = new RedisGuardStore(client, { stateSecret: STATE_SECRET, callerClock: true });
});
afterAll(async () => {
  await client?.close();
  await other?.close();
  await redis?.stop();
});

const entry = (key: string, n: number): AuditEntry => ({
  time: new Date(1_700_000_000_000 + n).toISOString(),
  key,
  server: 'engage-mcp-channel',
  operationId: 'channel.whatsapp.send',
  paramsDigest: `digest-${n}`,
  params: { message: '<text, 4 chars>' },
  confirmation: 'not needed',
  outcome: 'done',
});

describe('counters: check-and-add in one step', () => {
  it('adds up to the cap exactly, refuses what would pass it, and says where the count stands', async () => {
    const counter = freshCounter();
    expect(await store.take(counter, 2, 5, Date.now() + HOUR)).toEqual({ taken: true, count: 2 });
    expect(await store.take(counter, 3, 5, Date.now() + HOUR)).toEqual({ taken: true, count: 5 });
    expect(await store.take(counter, 1, 5, Date.now() + HOUR)).toEqual({ taken: false, count: 5 });
    expect(await store.count(counter)).toBe(5);
  });

  it('a cap of 0 refuses any message; a send of 0 messages passes and counts nothing', async () => {
    const counter = freshCounter();
    expect(await store.take(counter, 1, 0, Date.now() + HOUR)).toEqual({ taken: false, count: 0 });
    expect(await store.take(counter, 0, 0, Date.now() + HOUR)).toEqual({ taken: true, count: 0 });
    expect(await store.take(counter, 7, 3, Date.now() + HOUR)).toEqual({ taken: false, count: 0 });
  });

  it('the counter expires when the day it counts is over', async () => {
    const counter = freshCounter();
    await store.take(counter, 1, 5, Date.now() + HOUR);
    const ttl = (await client.command(['PTTL', `engage:guard:count:${counter}`])) as number;
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(HOUR);
  });

  it('60 takes racing on two connections pass a cap of 10 exactly 10 times', async () => {
    const counter = freshCounter();
    const stores = [store, new RedisGuardStore(other, { stateSecret: STATE_SECRET })];
    const results = await Promise.all(Array.from({ length: 60 }, (_, index) => stores[index % 2]!.take(counter, 1, 10, Date.now() + HOUR)));
    expect(results.filter((result) => result.taken)).toHaveLength(10);
    expect(await store.count(counter)).toBe(10);
  });

  it('gives back never below 0, keeps the expiry, and creates no counter that was not there', async () => {
    const counter = freshCounter();
    await store.take(counter, 3, 5, Date.now() + HOUR);
    await store.giveBack(counter, 2);
    expect(await store.count(counter)).toBe(1);
    expect((await client.command(['PTTL', `engage:guard:count:${counter}`])) as number).toBeGreaterThan(0);
    await store.giveBack(counter, 9);
    expect(await store.count(counter)).toBe(0);
    // Given back to 0, it is gone (redis-counter-given-back.test.ts): a missing counter counts as 0.
    expect(await client.command(['EXISTS', `engage:guard:count:${counter}`])).toBe(0);
    const absent = freshCounter();
    await store.giveBack(absent, 2);
    expect(await client.command(['EXISTS', `engage:guard:count:${absent}`])).toBe(0);
  });

  it('a counter holding something else fails closed: refused as unavailable, never taken as 0', async () => {
    const counter = freshCounter();
    await client.command(['SET', `engage:guard:count:${counter}`, 'not-a-number']);
    await expect(store.take(counter, 1, 5, Date.now() + HOUR)).rejects.toThrow(GUARD_STORE_UNAVAILABLE);
    await expect(store.count(counter)).rejects.toThrow(GUARD_STORE_UNAVAILABLE);
    await expect(store.giveBack(counter, 1)).rejects.toBeInstanceOf(InputError);
  });

  it('takes after the scripts were flushed from Redis (NOSCRIPT: sent whole once)', async () => {
    await client.command(['SCRIPT', 'FLUSH']);
    expect(await store.take(freshCounter(), 1, 1, Date.now() + HOUR)).toEqual({ taken: true, count: 1 });
  });
});

describe('idempotency records', () => {
  const record = { operationId: 'inbox.ticket.reply', digest: 'digest-a', at: 1_700_000_000_000 };
  const reply: CallToolResult = { content: [{ type: 'text', text: 'done' }], structuredContent: { outcome: 'done', data: { list: [], nested: {} } } };

  it('the first reserve holds the key; a second is answered the holder; settle keeps the first answer whole, expiry unchanged', async () => {
    expect(await store.lookup('fp:key-1')).toBeUndefined();
    expect(await store.reserve('fp:key-1', record, Date.now() + HOUR)).toBeUndefined();
    expect(await store.reserve('fp:key-1', { ...record, digest: 'other' }, Date.now() + HOUR)).toEqual(record);
    const ttl = (await client.command(['PTTL', 'engage:guard:idempotency:fp:key-1'])) as number;
    await store.settle('fp:key-1', reply);
    expect(await store.lookup('fp:key-1')).toEqual({ ...record, reply });
    expect((await client.command(['PTTL', 'engage:guard:idempotency:fp:key-1'])) as number).toBeLessThanOrEqual(ttl);
  });

  it('ten racing reserves on two connections: one holds the key', async () => {
    const stores = [store, new RedisGuardStore(other, { stateSecret: STATE_SECRET })];
    const results = await Promise.all(Array.from({ length: 10 }, (_, index) => stores[index % 2]!.reserve('fp:key-race', record, Date.now() + HOUR)));
    expect(results.filter((held) => held === undefined)).toHaveLength(1);
  });

  it('settling with no answer forgets the key (nothing was done); settling a key no longer held creates nothing', async () => {
    await store.reserve('fp:key-2', record, Date.now() + HOUR);
    await store.settle('fp:key-2', undefined);
    expect(await store.lookup('fp:key-2')).toBeUndefined();
    await store.settle('fp:key-3', reply);
    expect(await client.command(['EXISTS', 'engage:guard:idempotency:fp:key-3'])).toBe(0);
  });

  it('a record that is not ours to read fails closed', async () => {
    await client.command(['HSET', 'engage:guard:idempotency:fp:key-4', 'record', '{not json']);
    await expect(store.lookup('fp:key-4')).rejects.toThrow(GUARD_STORE_UNAVAILABLE);
  });
});

describe('the audit record', () => {
  const secret = remoteAuditSecret(STATE_SECRET);
  const lines = async (key: string) => (await client.command(['LRANGE', auditListKey(key), 0, -1])) as string[];

  it('its secret is derived from ENGAGE_STATE_SECRET, the same on every replica, and never stored in Redis', async () => {
    expect(await store.auditSecret()).toEqual(await new RedisGuardStore(other, { stateSecret: STATE_SECRET }).auditSecret());
    expect(Buffer.compare(await store.auditSecret(), Buffer.from(STATE_SECRET))).not.toBe(0);
    const stored = (await client.command(['KEYS', '*'])) as string[];
    for (const key of stored) expect(key).not.toMatch(/secret/i);
  });

  it('40 lines appended at once by two replicas form one chain, each once, in a list per key fingerprint', async () => {
    const stores = [store, new RedisGuardStore(other, { stateSecret: STATE_SECRET })];
    await Promise.all(Array.from({ length: 40 }, (_, index) => stores[index % 2]!.appendAudit(entry('fp-raced', index))));
    const record = await lines('fp-raced');
    expect(record).toHaveLength(40);
    expect(new Set(record.map((line) => (JSON.parse(line) as AuditEntry).paramsDigest)).size).toBe(40);
    expect(verifyAuditLines(secret, record)).toEqual({ ok: true, lines: 40 });
    expect(await lines('fp-other')).toEqual([]);
  });

  it('keeps the newest lines up to its cap; the capped record still verifies from its first line, and an edit is found', async () => {
    const capped = new RedisGuardStore(client, { stateSecret: STATE_SECRET, auditMaxLines: 3 });
    for (let index = 0; index < 7; index++) await capped.appendAudit(entry('fp-capped', index));
    const record = await lines('fp-capped');
    expect(record.map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual([5, 6, 7]);
    expect(verifyAuditLines(secret, record, undefined, true)).toEqual({ ok: true, lines: 7, first: 5 });
    expect(verifyAuditLines(secret, record)).toMatchObject({ ok: false, line: 1 });
    const edited = [record[0]!, record[1]!.replace('"outcome":"done"', '"outcome":"refused"'), record[2]!];
    expect(verifyAuditLines(secret, edited, undefined, true)).toMatchObject({ ok: false, line: 2 });
  });
});

describe('a Redis that is down', () => {
  it('refuses every write that needs the store with the clear answer, and works again once Redis is back', async () => {
    const down = await startRedis();
    const lone = await connectRedis(down.url, () => {}, { minBackoffMs: 10, maxBackoffMs: 50 });
    const onDown = new RedisGuardStore(lone, { stateSecret: STATE_SECRET });
    await down.stop();
    const refusals = [
      onDown.take('messages:fp:day', 1, 5, Date.now() + HOUR),
      onDown.count('messages:fp:day'),
      onDown.lookup('fp:key'),
      onDown.reserve('fp:key', { operationId: 'x.y', digest: 'd', at: 1 }, Date.now() + HOUR),
      onDown.appendAudit(entry('fp-down', 1)),
    ];
    for (const refusal of await Promise.allSettled(refusals)) {
      expect(refusal.status).toBe('rejected');
      expect((refusal as PromiseRejectedResult).reason).toBeInstanceOf(InputError);
      expect((refusal as PromiseRejectedResult).reason.message).toBe(GUARD_STORE_UNAVAILABLE);
    }
    expect(GUARD_STORE_UNAVAILABLE).toMatch(/nothing was sent\. Ask again in a minute/);
    await down.restart();
    let back: { taken: boolean } | undefined;
    for (let attempt = 0; attempt < 200 && !back; attempt++) {
      back = await onDown.take('messages:fp:day', 1, 5, Date.now() + HOUR).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 25));
        return undefined;
      });
    }
    expect(back).toEqual({ taken: true, count: 1 });
    await lone.close();
    await down.stop();
  });
});

describe("a write's last attempt, shared by the replicas (review8)", () => {
  let writeNumber = 0;
  const freshWrite = () => `write-digest-${++writeNumber}`;
  const T = 1_800_000_000_000;

  it('a yes given before a send that went out is refused; a yes given after it is not', async () => {
    const write = freshWrite();
    expect(await store.claimWrite(write, 'a', T - 10, T)).toBeUndefined();
    expect(await store.claimWrite(write, 'b', T - 10, T + 1)).toEqual({ outcome: 'in-flight', at: T });
    await store.settleWrite(write, 'a', 'done');
    expect(await store.claimWrite(write, 'b', T - 10, T + 2)).toEqual({ outcome: 'done', at: T });
    expect(await store.claimWrite(write, 'b', T, T + 2)).toEqual({ outcome: 'done', at: T }); // the same millisecond counts as before
    // Replicas' clocks may differ: a yes within WRITE_CLOCK_SKEW_MS after the send counts as before it too.
    expect(await store.claimWrite(write, 'b', T + WRITE_CLOCK_SKEW_MS, T + 3)).toEqual({ outcome: 'done', at: T });
    expect(await store.claimWrite(write, 'b', T + WRITE_CLOCK_SKEW_MS + 1, T + 3)).toBeUndefined();
  });

  it('an attempt that ends refused gives the place back to the one that went out before it', async () => {
    const write = freshWrite();
    await store.claimWrite(write, 'a', T - 1, T);
    await store.settleWrite(write, 'a', 'done');
    expect(await store.claimWrite(write, 'b', T + WRITE_CLOCK_SKEW_MS + 5, T + WRITE_CLOCK_SKEW_MS + 10)).toBeUndefined();
    await store.settleWrite(write, 'b', 'refused');
    expect(await store.lastSentWrite(write, T + WRITE_CLOCK_SKEW_MS + 11)).toEqual({ outcome: 'done', at: T });
    expect(await store.claimWrite(write, 'c', T - 1, T + WRITE_CLOCK_SKEW_MS + 12)).toEqual({ outcome: 'done', at: T });
    const alone = freshWrite();
    await store.claimWrite(alone, 'a', T - 1, T);
    await store.settleWrite(alone, 'a', 'refused');
    expect(await store.lastSentWrite(alone, T + 1)).toBeUndefined();
  });

  it("only the owner settles its mark: another attempt's outcome never ends it", async () => {
    const write = freshWrite();
    await store.claimWrite(write, 'owner', T - 1, T);
    await store.settleWrite(write, 'someone-else', 'done');
    await store.settleWrite(write, 'someone-else', 'refused');
    expect(await store.lastSentWrite(write, T + 1)).toEqual({ outcome: 'in-flight', at: T });
    await store.settleWrite(write, 'owner', 'unknown');
    expect(await store.lastSentWrite(write, T + 2)).toEqual({ outcome: 'unknown', at: T });
  });

  it('a mark stays in flight while its owner renews it, and is an unknown outcome once the lease lapses', async () => {
    const write = freshWrite();
    await store.claimWrite(write, 'owner', T - 1, T);
    await store.renewWrite(write, 'owner', T + WRITE_MARK_LEASE_MS - 1);
    await store.renewWrite(write, 'not-the-owner', T + 10 * WRITE_MARK_LEASE_MS);
    expect(await store.lastSentWrite(write, T + 2 * WRITE_MARK_LEASE_MS - 2)).toEqual({ outcome: 'in-flight', at: T });
    expect(await store.claimWrite(write, 'b', T - 1, T + 2 * WRITE_MARK_LEASE_MS - 2)).toEqual({ outcome: 'in-flight', at: T });
    expect(await store.lastSentWrite(write, T + 2 * WRITE_MARK_LEASE_MS - 1)).toEqual({ outcome: 'unknown', at: T });
    expect(await store.claimWrite(write, 'b', T - 1, T + 2 * WRITE_MARK_LEASE_MS - 1)).toEqual({ outcome: 'unknown', at: T });
  });

  it('a value Redis holds that is not an attempt fails closed', async () => {
    const write = freshWrite();
    await store.claimWrite(write, 'a', T - 1, T);
    await client.command(['HSET', `engage:guard:write:${write}`, 'outcome', 'sent-twice']);
    await expect(store.claimWrite(write, 'b', T, T + 2)).rejects.toThrow(InputError);
  });
});

describe("how a spent confirmation's use ended, shared by the replicas", () => {
  const T = 1_800_000_000_000;

  it('keeps an end (done, unknown, refused), never "in flight", and fails closed on a value it cannot read', async () => {
    await store.noteConfirmation('token:sent', { outcome: 'done', at: T });
    await store.noteConfirmation('token:unsent', { outcome: 'refused', at: T + 1 });
    await store.noteConfirmation('token:flying', { outcome: 'in-flight', at: T + 2 });
    expect(await store.confirmationOutcome('token:sent')).toEqual({ outcome: 'done', at: T });
    expect(await store.confirmationOutcome('token:unsent')).toEqual({ outcome: 'refused', at: T + 1 });
    expect(await store.confirmationOutcome('token:flying')).toBeUndefined();
    expect(await store.confirmationOutcome('token:never-spent')).toBeUndefined();
    await client.command(['SET', 'engage:guard:confirmation:token:odd', 'sent-twice 1']);
    await expect(store.confirmationOutcome('token:odd')).rejects.toThrow(InputError);
  });
});
