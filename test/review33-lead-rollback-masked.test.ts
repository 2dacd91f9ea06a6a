// Review 33 (lead): a Redis gone back to an older copy was found only by a replica that had seen
// more claims in the epoch than the copy holds. Claims made on the copy since count up again, so
// after as many claims as it lost, on any replica, the count read the same: the replica whose mark
// the copy lost saw nothing, never put it back, and another replica sent the same write again.
// Each replica's own claims are now counted in Redis too, and a replica that finds fewer of its
// own than it made (while it keeps marks) knows Redis went back, whatever the others claimed since.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, STATE_LOST } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

// Long: the replicas' own checks of the epoch stay out of the test's way; each step is a script run here.
const QUIET_MS = 60_000;
const { clients } = redisPerFile(3);
let writeNumber = 0;
const freshWrite = () => `masked-rollback-write-${++writeNumber}`;

/** Two replicas on `prefix`, each having used Redis once. */
async function twoReplicas(prefix: string) {
  const [a, b] = [0, 1].map((index) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS, prefix }));
  await a!.lastSentWrite(freshWrite(), Date.now());
  await b!.lastSentWrite(freshWrite(), Date.now());
  return { a: a!, b: b! };
}

/** Redis goes back to the copy taken before `lost` was claimed: the write's mark and the epoch's count as they were. */
async function rollBack(prefix: string, lagging: { epoch: string; claims: unknown[] }, lost: string) {
  const admin = clients[2]!;
  await admin.command(['DEL', `${prefix}guard:write:${lost}`]);
  await admin.command(['SET', `${prefix}guard:epoch`, lagging.epoch]);
  await admin.command(['DEL', `${prefix}guard:claims`]);
  if (lagging.claims.length > 0) await admin.command(['HSET', `${prefix}guard:claims`, ...(lagging.claims as string[])]);
}

async function snapshot(prefix: string) {
  const admin = clients[2]!;
  return {
    epoch: (await admin.command(['GET', `${prefix}guard:epoch`])) as string,
    claims: (await admin.command(['HGETALL', `${prefix}guard:claims`])) as unknown[],
  };
}

describe('a Redis gone back to an older copy, its count of claims made up by claims since', () => {
  it('a write in flight on one replica is not claimed again on the other', async () => {
    const prefix = 'engage-masked-1:';
    const { a, b } = await twoReplicas(prefix);
    const write = freshWrite();
    const lagging = await snapshot(prefix);
    expect(await a.claimWrite(write, 'owner-a', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    await rollBack(prefix, lagging, write);
    // Another write claimed on the copy brings the epoch's count back to what a saw.
    expect(await b.claimWrite(freshWrite(), 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    // a's next renewal: its mark is its own (put back), not one another server took over.
    expect(await a.renewWrite(write, 'owner-a', Date.now())).toBe(true);
    await expect(b.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).rejects.toThrow(STATE_LOST);
  });

  it('a write sent after a yes still refuses that yes on the other replica', async () => {
    const prefix = 'engage-masked-2:';
    const { a, b } = await twoReplicas(prefix);
    const write = freshWrite();
    const yes = Date.now() - 60_000;
    const lagging = await snapshot(prefix);
    expect(await a.claimWrite(write, 'owner-a', yes, Date.now())).toBeUndefined();
    await a.settleWrite(write, 'owner-a', 'done');
    await rollBack(prefix, lagging, write);
    expect(await b.claimWrite(freshWrite(), 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    // a reads Redis (its check of the epoch while it keeps marks does the same).
    await a.lastSentWrite(freshWrite(), Date.now());
    await expect(b.claimWrite(write, 'owner-b', yes, Date.now())).rejects.toThrow(STATE_LOST);
  });

  it('claims by other replicas alone are no loss', async () => {
    const prefix = 'engage-masked-3:';
    const { a, b } = await twoReplicas(prefix);
    const write = freshWrite();
    expect(await a.claimWrite(write, 'owner-a', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    for (let index = 0; index < 3; index++) expect(await b.claimWrite(freshWrite(), 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    expect(await a.renewWrite(write, 'owner-a', Date.now())).toBe(true);
    expect(await a.claimWrite(freshWrite(), 'owner-a2', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    expect(await b.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).toMatchObject({ outcome: 'in-flight' });
  });
});

describe('a Redis gone back again, to before the marks were put back', () => {
  it('is seen by the replica that put them back: the write in flight is not claimed again', async () => {
    const prefix = 'engage-masked-4:';
    const { a, b } = await twoReplicas(prefix);
    const write = freshWrite();
    const admin = clients[2]!;
    expect(await a.claimWrite(write, 'owner-a', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    // Redis loses it all; b sees it first (a new epoch, the quiet), then a puts its mark back.
    await admin.command(['DEL', `${prefix}guard:write:${write}`, `${prefix}guard:epoch`, `${prefix}guard:claims`, `${prefix}guard:clock-leads`]);
    await b.lastSentWrite(freshWrite(), Date.now());
    const beforePutBack = await snapshot(prefix);
    expect(await a.renewWrite(write, 'owner-a', Date.now())).toBe(true);
    // It goes back to a copy taken before the mark was put back, its quiet over (as 75 s later).
    const [id, madeAt, , seq] = beforePutBack.epoch.split(' ');
    await rollBack(prefix, { ...beforePutBack, epoch: `${id} ${madeAt} 0 ${seq}` }, write);
    await a.lastSentWrite(freshWrite(), Date.now()); // a's next script (its check of the epoch does the same)
    await expect(b.claimWrite(write, 'owner-b', Number.MAX_SAFE_INTEGER, Date.now())).rejects.toThrow(STATE_LOST);
  });
});
