// Review 34 (replicas): every replica that ever started is an entry in the replicas' clocks (a hash
// kept 45 minutes after its last script), and every mark script (each claim, renewal, read, and
// each replica's report every 25 s) read the whole hash (HGETALL) to find the most any replica
// leads. Restarts, rolling deploys, autoscaling and crash loops add an entry each: with 500 dead
// ones a script cost Redis 0.31 ms instead of 0.02 ms, with 5,000 2.9 ms (Redis single-threaded:
// about 350 writes a second for every tenant together), and 10,000 marks put back after a loss took
// 3 s, past the 2 s command timeout. The most is now kept beside the hash and the hash read once
// in CLOCK_SCAN_MS by whichever script comes, the others reading one field.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const PREFIX = 'engage-clock-scan:';
const DEAD_REPLICAS = 500;
const CLAIMS = 100;
const { clients } = redisPerFile(2);

/** How many times Redis ran `command`, scripts' calls included, as INFO commandstats counts them. */
async function callsOf(admin: RedisClient, command: string): Promise<number> {
  const stats = String(await admin.command(['INFO', 'commandstats']));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

describe("the replicas' clocks, with 500 replicas restarted in the last 45 minutes", () => {
  it('are not read whole by every mark script', async () => {
    const [client, admin] = clients as [RedisClient, RedisClient];
    const time = (await admin.command(['TIME'])) as string[];
    const redisNow = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
    for (let index = 0; index < DEAD_REPLICAS; index++) {
      await admin.command(['HSET', `${PREFIX}guard:clock-leads`, `restarted-${index}`, `0 ${redisNow - 60_000}`]);
    }
    const store = new RedisGuardStore(client, { stateSecret: STATE_SECRET, prefix: PREFIX });
    const before = await callsOf(admin, 'hgetall');
    for (let index = 0; index < CLAIMS; index++) {
      expect(await store.claimWrite(`write-${index}`, `owner-${index}`, Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined();
    }
    expect((await callsOf(admin, 'hgetall')) - before).toBeLessThanOrEqual(2);
  });

  it('a lead said between two reads of the hash still counts for a yes at once, on every replica', async () => {
    const [client, admin] = clients as [RedisClient, RedisClient];
    const prefix = 'engage-clock-scan-2:';
    const FIVE_MINUTES = 5 * 60_000;
    const steady = new RedisGuardStore(client, { stateSecret: STATE_SECRET, prefix });
    const fast = new RedisGuardStore(admin, { stateSecret: STATE_SECRET, prefix });
    expect(await steady.claimWrite('first', 'owner-steady', Number.MAX_SAFE_INTEGER, Date.now())).toBeUndefined(); // the hash read now
    // A replica five minutes fast says its lead in its first script; a yes it gave a minute before
    // a send on the steady replica reads, there, as given before that send: asked again, not sent.
    const yes = Date.now() + FIVE_MINUTES;
    await fast.lastSentWrite('a-read', Date.now() + FIVE_MINUTES);
    await steady.settleWrite('first', 'owner-steady', 'done');
    expect(await steady.claimWrite('first', 'owner-again', yes - 60_000, Date.now())).toMatchObject({ outcome: 'done' });
  });
});
