// Review 34 (replicas): on a Redis whose user may not run INFO (a managed Redis's ACL), the check
// of the eviction policy before each write, meant at most every 5 s, ran INFO before every write:
// a reading that failed was not a reading, so each write cost Redis one more command, refused.
// A failed reading now waits its 5 s too (the last good reading, if any, still holds).
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

// The admin, and a user INFO is refused to.
const { clients } = redisPerFile(2, { users: ['noinfo on >noinfo-pass ~* &* +@all -info'] }, (url) => [
  url,
  url.replace('redis://', 'redis://noinfo:noinfo-pass@'),
]);

/** INFO's calls, refused ones included, as INFO commandstats counts them. */
async function infoAsked(admin: RedisClient): Promise<number> {
  const stats = String(await admin.command(['INFO', 'commandstats']));
  const [, calls = '0', refused = '0'] = /cmdstat_info:calls=(\d+).*?rejected_calls=(\d+)/.exec(stats) ?? [];
  return Number(calls) + Number(refused);
}

describe('a Redis user INFO is refused to', () => {
  it('is asked INFO at most once in 5 s, not before every write', async () => {
    const [admin, limited] = clients as [RedisClient, RedisClient];
    const store = new RedisGuardStore(limited, { stateSecret: STATE_SECRET, prefix: 'engage-noinfo:' });
    const before = await infoAsked(admin);
    for (let write = 0; write < 20; write++) await store.ready();
    // The admin's own INFO commandstats is one of them.
    expect((await infoAsked(admin)) - before).toBeLessThanOrEqual(2);
  });
});
