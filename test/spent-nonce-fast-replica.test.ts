// Remote mode: a spent confirmation's nonce was kept in Redis for what was left of the value's life
// by the clock of the replica that spent it. One whose clock ran 40 minutes fast kept it 1 ms, and a
// replica with a right clock, to which the token was still good, ran it again (after the write's own
// mark, kept 30 minutes, no longer stood in the way, that sent the write twice). A nonce is now kept
// a day past its value's life, whatever the spending replica's clock says.
import { describe, expect, it } from 'vitest';
import { RedisSpentStore } from '../packages/http/src/redis.js';
import type { RedisClient } from '../packages/http/src/redis.js';
import { redisPerFile } from './helpers/redis-per-file.js';

const { clients } = redisPerFile(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a nonce spent on a replica whose clock runs fast', () => {
  it('is still spent for a replica with a right clock while the value is good there', async () => {
    const redis = clients[0] as RedisClient;
    const fast = new RedisSpentStore(redis, 'spent-fast:', { now: () => Date.now() + 40 * 60_000 });
    const right = new RedisSpentStore(redis, 'spent-fast:');
    const expiresAt = Date.now() + 5 * 60_000;
    expect(await fast.consume('nonce-1', expiresAt)).toBe(true);
    await sleep(20);
    expect(await right.consume('nonce-1', expiresAt)).toBe(false);
  });
});
