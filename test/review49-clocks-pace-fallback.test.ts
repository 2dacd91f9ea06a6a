// Review 49 (clocks): the Pacer times its waits by the monotonic clock (f02a6c6: a clock set back an
// hour after a 429 held every request for that hour). Remote mode's shared pace (redis.ts
// RedisPaceKeeper) keeps a Pacer of its own for while Redis fails, and learns every 429 into it; that
// one was still made on the system clock (`new Pacer(options.now ?? Date.now)`), so with Redis
// down, a clock set back an hour after a 429 held every request on the key for that hour.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisPaceKeeper, type RedisClient } from '../packages/http/src/redis.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** A Redis that never answers (down): the keeper paces on its own. */
const downRedis: RedisClient = {
  command: async () => {
    throw new Error('connection refused');
  },
  close: async () => undefined,
};

describe('remote mode with Redis down: a 429 asking for a second, then the system clock set back an hour', () => {
  it('the pace holds requests for that second, not for the hour', async () => {
    let setBack = 0;
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - setBack);
    const keeper = new RedisPaceKeeper(downRedis, 'r49-key', 'engage:pace:', { log: () => undefined });
    await keeper.hold(1_000, 60_000);
    expect(keeper.usingFallback).toBe(true);
    setBack = 3_600_000;
    expect(await keeper.waitEstimateMs()).toBeLessThanOrEqual(1_000);
    expect(await keeper.reserve(5_000)).toBeLessThanOrEqual(1_000);
  });
});
