// review22c: a write's shared mark (remote mode on Redis) whose settling Redis did not take. The
// mark is settled once the API answered, tried three times at once (shared-mark.ts settleShared);
// while the connection is being made again (a Redis restart, a failover, a dropped connection),
// all three fail at once, and the mark stayed "in flight": for 3 minutes every replica answered
// the same write "still being sent" (for a write the API refused, so nothing was sent), and then,
// for 30 minutes, its outcome "unknown". Review22b gave back only a mark whose claim was lost.
// A settling Redis did not take is done again now, as soon as Redis answers.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, SETTLE_WRITE } from '../packages/http/src/redis-guard-store.js';
import { until } from './helpers.js';
import { STATE_SECRET, redisPerFile } from './review22b-stalling.js';

const { client } = redisPerFile();

/** Replica 1: its next `lost` SETTLE_WRITEs never reach Redis (the connection is being made again). */
async function lossyReplica() {
  const real = await client();
  let lost = 0;
  const lossy: RedisClient = {
    async command(args) {
      if (lost > 0 && (args[1] === SETTLE_WRITE.sha || args[1] === SETTLE_WRITE.source)) {
        lost -= 1;
        throw new Error('Redis is not connected (reconnecting)');
      }
      return real.command(args);
    },
    close: () => real.close(),
  };
  return { store: new RedisGuardStore(lossy, { stateSecret: STATE_SECRET }), lose: (count: number) => void (lost = count) };
}

describe('review22c: a write mark whose settling Redis did not take', () => {
  it.each([
    ['refused', undefined],
    ['done', 'done'],
  ] as const)('settled %s while Redis did not answer: once it does, the mark says so, not "in flight"', async (outcome, shown) => {
    const replica1 = await lossyReplica();
    const replica2 = new RedisGuardStore(await client(), { stateSecret: STATE_SECRET });
    const write = `review22c-mark-${outcome}`;
    const approvedAt = Date.now();
    expect(await replica1.store.claimWrite(write, 'owner-1', approvedAt, Date.now())).toBeUndefined();
    replica1.lose(3);
    for (let tries = 0; tries < 3; tries++) await expect(replica1.store.settleWrite(write, 'owner-1', outcome)).rejects.toThrow();
    // Settled again in the background once Redis answers: waited for (until the mark is no longer in flight), not a fixed second.
    await until('the mark settled again', async () => (await replica2.lastSentWrite(write, Date.now()))?.outcome !== 'in-flight');
    expect((await replica2.lastSentWrite(write, Date.now()))?.outcome).toBe(shown);
    // A new yes for the same write on another replica is not told "still being sent".
    const refusedBy = await replica2.claimWrite(write, 'owner-2', Date.now() + 10_000, Date.now() + 10_000);
    expect(refusedBy?.outcome).not.toBe('in-flight');
  });
});
