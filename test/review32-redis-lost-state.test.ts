// Review 32 (Redis lost its data: restarted empty, FLUSHALL, a failover to a replica that lagged):
// the marks of writes in flight and of writes sent in the last half hour were gone, so another
// replica sent the same write again: one still at the API (its replica renews a mark that is no
// longer there), or one sent after a yes given earlier (that yes, used on another replica, found no
// send since it). Redis now holds an epoch, with a count of the marks made in it; a replica that
// finds it gone, changed, or with fewer marks than it saw (gone back to a copy that lagged) knows Redis lost
// what it held: each puts back the marks it made (in flight, or sent within the half hour), and
// claims are refused (nothing sent, the model told why) for a quiet time from the loss, long enough
// for every replica's next renewal, or its check of the epoch while it keeps marks, to see it.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, STATE_LOST } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const QUIET_MS = 1_000;
const { clients } = redisPerFile(3);
let writeNumber = 0;
const freshWrite = () => `lost-state-write-${++writeNumber}`;

/** Two replicas' stores, each having used Redis once (so each knows its epoch), and Redis emptied. */
async function twoReplicasThenFlush(before: (a: RedisGuardStore) => Promise<void>) {
  const [a, b] = [0, 1].map((index) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS }));
  await b!.lastSentWrite(freshWrite(), Date.now());
  await before(a!);
  await clients[2]!.command(['FLUSHALL']);
  return { a: a!, b: b! };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Redis emptied while replicas hold marks', () => {
  it('a write still in flight on one replica is not claimed again on the other', async () => {
    const write = freshWrite();
    const { a, b } = await twoReplicasThenFlush(async (a) => {
      expect(await a.claimWrite(write, 'owner-a', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    });
    await expect(b.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).rejects.toThrow(STATE_LOST);
    // Its next renewal sees the loss and puts its marks back: its own, not taken over by another.
    expect(await a.renewWrite(write, 'owner-a', Date.now())).toBe(true);
    await sleep(QUIET_MS + 50);
    expect(await b.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).toMatchObject({ outcome: 'in-flight' });
  });

  it('a write sent before the loss still refuses a yes given before it, on the other replica', async () => {
    const write = freshWrite();
    const yes = Date.now() - 60_000;
    const { a, b } = await twoReplicasThenFlush(async (a) => {
      expect(await a.claimWrite(write, 'owner-a', yes, Date.now())).toBeUndefined();
      await a.settleWrite(write, 'owner-a', 'done');
    });
    await expect(b.claimWrite(write, 'owner-b', yes, Date.now())).rejects.toThrow(STATE_LOST);
    await a.lastSentWrite(freshWrite(), Date.now());
    await sleep(QUIET_MS + 50);
    expect(await b.claimWrite(write, 'owner-b', yes, Date.now())).toMatchObject({ outcome: 'done' });
    expect(await b.lastSentWrite(write, Date.now())).toMatchObject({ outcome: 'done' });
  });

  it('a replica that sent a write and is idle since puts its mark back within the quiet', async () => {
    const write = freshWrite();
    const yes = Date.now() - 60_000;
    const { b } = await twoReplicasThenFlush(async (a) => {
      expect(await a.claimWrite(write, 'owner-a', yes, Date.now())).toBeUndefined();
      await a.settleWrite(write, 'owner-a', 'done');
    });
    await expect(b.claimWrite(write, 'owner-b', yes, Date.now())).rejects.toThrow(STATE_LOST);
    await sleep(QUIET_MS + 50);
    expect(await b.claimWrite(write, 'owner-b', yes, Date.now())).toMatchObject({ outcome: 'done' });
  });

  it('a Redis gone back to an older copy (a failover to a replica that lagged) is a loss too', async () => {
    const [a, b] = [0, 1].map((index) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS }));
    const write = freshWrite();
    await b!.lastSentWrite(freshWrite(), Date.now());
    // What the lagging copy holds: the state before a's claim.
    const lagging = (await clients[2]!.command(['GET', 'engage:guard:epoch'])) as string;
    expect(await a!.claimWrite(write, 'owner-a', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    await clients[2]!.command(['DEL', `engage:guard:write:${write}`]);
    await clients[2]!.command(['SET', 'engage:guard:epoch', lagging]);
    await sleep(QUIET_MS / 2); // a's check of the epoch, while it keeps its mark, sees fewer claims than it saw
    await expect(b!.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).rejects.toThrow(STATE_LOST);
    await sleep(QUIET_MS + 50);
    expect(await b!.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).toMatchObject({ outcome: 'in-flight' });
  });

  it('a Redis no replica has used yet is no loss: nothing is refused', async () => {
    // Its own prefix: the other tests' replicas, still keeping marks, would rightly see this flush as a loss.
    const fresh = new RedisGuardStore(clients[0] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: 60_000, prefix: 'engage-fresh:' });
    await clients[2]!.command(['FLUSHALL']);
    expect(await fresh.claimWrite(freshWrite(), 'owner', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
  });
});
