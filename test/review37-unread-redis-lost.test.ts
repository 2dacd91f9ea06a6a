// review37: a write's unread note (its answer never read: the next identical call of a write that
// needs no yes is told so, and sends nothing) in Redis, held in the write's hash. Redis losing what
// it held (restarted empty, FLUSHALL) lost the note with the mark, and the other replica sent the
// write again: the replica that settled it now puts the note back with its mark, unless a claim
// or kept answer of its own has told of it already. A note another version left on a later
// attempt (it neither writes nor clears the field) never applies to that attempt.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, STATE_LOST } from '../packages/http/src/redis-guard-store.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const QUIET_MS = 1_000;
const { clients } = redisPerFile(3);
let writeNumber = 0;
const freshWrite = () => `unread-note-write-${++writeNumber}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two replicas' stores, each having used Redis once (so each knows its epoch); `before` runs, then Redis is emptied. */
async function twoReplicasThenFlush(before: (a: RedisGuardStore) => Promise<void>) {
  const [a, b] = [0, 1].map((index) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS }));
  await b!.lastSentWrite(freshWrite(), Date.now());
  await before(a!);
  await clients[2]!.command(['FLUSHALL']);
  return { a: a!, b: b! };
}

/** A write needing no yes, marked and carried out on `store` for a host that never read its answer. */
async function sentUnread(store: RedisGuardStore, write: string, owner: string) {
  expect(await store.claimWrite(write, owner, NO_YES, Date.now())).toBeUndefined();
  await store.settleWrite(write, owner, 'done', true);
}

describe('an unread note in Redis', () => {
  it('is put back with its mark after Redis lost it, and told once', async () => {
    const write = freshWrite();
    const { b } = await twoReplicasThenFlush((a) => sentUnread(a, write, 'owner-a'));
    await expect(b.claimWrite(write, 'owner-b', NO_YES, Date.now())).rejects.toThrow(STATE_LOST);
    await sleep(QUIET_MS + 50);
    expect(await b.claimWrite(write, 'owner-b', NO_YES, Date.now())).toMatchObject({ outcome: 'done', unread: true });
    expect(await b.claimWrite(write, 'owner-b2', NO_YES, Date.now())).toBeUndefined();
  });

  it('is not put back by the replica that gave its kept answer (took the note) before the loss', async () => {
    const write = freshWrite();
    const { b } = await twoReplicasThenFlush(async (a) => {
      await sentUnread(a, write, 'owner-a');
      expect(await a.takeUnread(write)).toBe(true);
    });
    await expect(b.claimWrite(write, 'owner-b', NO_YES, Date.now())).rejects.toThrow(STATE_LOST);
    await sleep(QUIET_MS + 50);
    expect(await b.claimWrite(write, 'owner-b', NO_YES, Date.now())).toBeUndefined();
  });

  it('never applies to a later attempt that a replica of the version before marked and settled (it leaves the field)', async () => {
    const store = new RedisGuardStore(clients[0] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS });
    const write = freshWrite();
    await sentUnread(store, write, 'owner-1');
    const key = (await clients[2]!.command(['KEYS', `*${write}*`])) as string[];
    expect(key).toHaveLength(1);
    // The version before: its claim and settling write at and outcome only, the note left as it was.
    await clients[2]!.command(['HSET', key[0]!, 'at', String(Number(await clients[2]!.command(['HGET', key[0]!, 'at'])) + 5)]);
    expect(await store.claimWrite(write, 'owner-2', NO_YES, Date.now())).toBeUndefined();
  });

  it('is not taken by a write that needs a yes (its claim goes by its yes, as before)', async () => {
    const store = new RedisGuardStore(clients[0] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS });
    const write = freshWrite();
    await sentUnread(store, write, 'owner-1');
    const yesBefore = Date.now() - 60_000;
    expect(await store.claimWrite(write, 'owner-2', yesBefore, Date.now())).toMatchObject({ outcome: 'done' });
    expect(await store.claimWrite(write, 'owner-3', NO_YES, Date.now())).toMatchObject({ outcome: 'done', unread: true });
  });
});
