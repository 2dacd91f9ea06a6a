// Review 34 (replicas): when Redis lost what it held, a replica put back every mark it keeps (up to
// 10,000) as that many scripts at once, on the one connection every call of the replica shares,
// whose queue holds 10,000 commands. With any other command waiting (another call's), the last
// marks were refused ("too many Redis commands waiting"), the putting back counted as failed, and
// those writes' marks stayed lost; every call of the replica that came meanwhile was refused too.
// With a clock-leads hash grown by restarted replicas (500 entries: 0.3 ms a script), 10,000
// scripts at once also outlast the 2 s command timeout, which drops the connection, and every
// mark script after retried all 10,000 again.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const PREFIX = 'engage-restore-bounded:';
const MARKS = 10_000;
const { clients } = redisPerFile(2);

describe('Redis lost what it held, a replica keeping 10,000 marks', () => {
  it('puts every one back while another call waits on Redis', async () => {
    const client = clients[0] as RedisClient;
    const admin = clients[1] as RedisClient;
    const store = new RedisGuardStore(client, { stateSecret: STATE_SECRET, prefix: PREFIX, lossQuietMs: 60_000 });
    for (let batch = 0; batch < MARKS / 500; batch++) {
      const claims = Array.from({ length: 500 }, (_, index) => store.claimWrite(`write-${batch}-${index}`, 'owner', Number.MAX_SAFE_INTEGER, Date.now()));
      expect((await Promise.all(claims)).every((held) => held === undefined)).toBe(true);
    }
    await store.lastSentWrite('a-read', Date.now()); // its script known to Redis, as on a replica that has run one
    await admin.command(['FLUSHALL']);
    // Another call's command still waiting on this connection when the marks go back: Redis paused,
    // the script that finds the loss is sent, then a BLPOP that holds its place 300 ms once Redis runs again.
    await admin.command(['CLIENT', 'PAUSE', 300, 'ALL']);
    const finding = store.lastSentWrite('a-read', Date.now());
    await new Promise((resolve) => setTimeout(resolve, 100));
    const waiting = client.command(['BLPOP', `${PREFIX}nothing`, 0.3]).then(() => 'answered');
    const [, waited] = await Promise.all([finding, waiting]);
    expect(waited).toBe('answered');
    const back = Number(await admin.command(['EVAL', `return #redis.call('KEYS', ARGV[1])`, 0, `${PREFIX}guard:write:*`]));
    expect(back).toBe(MARKS);
  }, 60_000);
});
