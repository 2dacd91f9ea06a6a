// A daily cap's counter on Redis given back to 0 (a send the API refused: a made-up key's, a 401)
// stayed in Redis at 0 for its day and more: one key per made-up key that tried a send, on a Redis
// that must run with noeviction, so enough of them refuse every write (review36-remote). A counter
// given back to 0 is now deleted; a missing counter counts as 0, so no cap reads differently.
import { describe, expect, it } from 'vitest';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { STATE_SECRET, redisPerFile } from './helpers/redis-per-file.js';

const { clients } = redisPerFile(1);

describe('a daily cap counter on Redis', () => {
  it('given back to 0 is gone; given back in part, or taken again, it counts as before', async () => {
    const redis = clients[0]!;
    const store = new RedisGuardStore(redis, { stateSecret: STATE_SECRET, prefix: 'given-back:' });
    const day = Date.now() + 60_000;
    expect(await store.take('cap:a', 2, 10, day)).toEqual({ taken: true, count: 2 });
    await store.giveBack('cap:a', 1);
    expect(await store.count('cap:a')).toBe(1);
    expect(await redis.command(['EXISTS', 'given-back:guard:count:cap:a'])).toBe(1);
    await store.giveBack('cap:a', 1);
    expect(await redis.command(['EXISTS', 'given-back:guard:count:cap:a'])).toBe(0);
    expect(await store.count('cap:a')).toBe(0);
    expect(await store.take('cap:a', 3, 10, day)).toEqual({ taken: true, count: 3 });
    await store.giveBack('cap:a', 5);
    expect(await redis.command(['EXISTS', 'given-back:guard:count:cap:a'])).toBe(0);
  });
});
