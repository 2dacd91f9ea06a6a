// Review 34 (replicas): the guard store's report of its clock's lead (every third of the quiet after
// a loss) and its epoch watch were never stopped: after the service closed (SIGTERM's drain done, or
// a service started and stopped in a process that goes on) they ran their script on Redis for the
// life of the process, and held the store and every mark it keeps. Closing the service stops them.
import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { startService } from '../packages/http/src/service.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const { clients } = redisPerFile(2);

/** How many scripts Redis has run (EVALSHA and EVAL), as INFO commandstats counts them. */
async function scriptsRun(admin: RedisClient): Promise<number> {
  const stats = String(await admin.command(['INFO', 'commandstats']));
  return [...stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)].reduce((sum, [, calls]) => sum + Number(calls), 0);
}

describe('a service on Redis, closed', () => {
  it("runs none of its guard store's scripts after", async () => {
    const [client, admin] = clients as [RedisClient, RedisClient];
    // A quiet of 300 ms: the report every 100 ms.
    const guardStore = new RedisGuardStore(client, { stateSecret: STATE_SECRET, prefix: 'engage-timers:', lossQuietMs: 300 });
    const service = await startService({ env: { ENGAGE_BASE_URL: 'http://127.0.0.1:9' }, catalogs: CATALOGS, port: 0, writeLog: () => undefined, guardStore });
    await guardStore.claimWrite('a-write', 'an-owner', Date.now(), Date.now()); // a mark kept: the epoch watch runs too
    await service.close();
    const closedAt = await scriptsRun(admin);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await scriptsRun(admin)) - closedAt).toBe(0);
  });
});
