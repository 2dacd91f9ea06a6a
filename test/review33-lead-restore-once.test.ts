// Review 33 (lead): when Redis lost what it held, every mark script a replica had on its way found
// the new epoch and put back all the marks the replica keeps (up to 10,000), each on its own: a
// busy replica with 20 calls at Redis sent 20 times its marks in scripts at once, to a Redis just
// back. One putting back per epoch now serves every script that finds it.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const PREFIX = 'engage-restore-once:';
const MARKS = 100;
const CALLS = 20;
const { clients } = redisPerFile(2);

/** How many scripts Redis has run by sha (EVALSHA), as INFO commandstats counts them. */
async function scriptsRun(admin: RedisClient): Promise<number> {
  const stats = String(await admin.command(['INFO', 'commandstats']));
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

describe('Redis lost what it held, a replica with many calls at it', () => {
  it('puts its marks back once, not once per call', async () => {
    const store = new RedisGuardStore(clients[0] as RedisClient, { stateSecret: STATE_SECRET, prefix: PREFIX, lossQuietMs: 60_000 });
    const admin = clients[1]!;
    for (let index = 0; index < MARKS; index++) {
      expect(await store.claimWrite(`write-${index}`, `owner-${index}`, Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    }
    await admin.command(['FLUSHALL']);
    const before = await scriptsRun(admin);
    await Promise.all(Array.from({ length: CALLS }, (_, index) => store.lastSentWrite(`read-${index}`, Date.now())));
    const run = (await scriptsRun(admin)) - before;
    expect(run).toBeLessThanOrEqual(CALLS + MARKS + 5);
    // All put back: each write's mark is its own, in flight.
    expect(await store.renewWrite('write-7', 'owner-7', Date.now())).toBe(true);
  });
});
