// Review 49 (clocks): remote mode tells Redis how far each replica's clock (the one it dates its
// yeses and attempts by, which a clock set back leaves ahead) leads Redis's, and every replica reads
// a yes by the most any replica leads. The journal's forward clock runs at half rate while ahead, so
// a lead is caught up in twice its length (b440a16); the store's own copy of that clock, which its
// reports go by, still ran at the full rate: a replica whose clock was set back an hour reported an
// hour's lead for as long as it ran, and on every replica a yes to a write sent in the last half
// hour (the person shown that send, and agreeing) read as given before it and was refused, for good.
// vitest: modules of its own (it moves both clocks two hours on across awaits: a module it shares would keep
// forwardNow ahead, which never goes back).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const HOUR = 3_600_000;
const { clients } = redisPerFile(1);

afterEach(() => {
  vi.restoreAllMocks();
});

/** What the replicas' clocks say in Redis, by field: its lead over Redis's clock (ms). */
async function leadsIn(prefix: string): Promise<Map<string, number>> {
  const said = (await clients[0]!.command(['HGETALL', `${prefix}guard:clock-leads`])) as string[];
  const leads = new Map<string, number>();
  for (let index = 0; index < said.length; index += 2) leads.set(String(said[index]), Number(String(said[index + 1]).split(' ')[0]));
  return leads;
}

/** Redis's clock (TIME), in ms. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = (await clients[0]!.command(['TIME'])) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe('a replica whose clock was set back an hour', () => {
  it('reports no more lead than its system clock has once twice that time has passed', async () => {
    const prefix = 'engage-r49-lead:';
    const store = new RedisGuardStore(clients[0] as RedisClient, { stateSecret: STATE_SECRET, prefix });
    try {
      // A write claimed while its clock ran an hour fast (its journal dated it so), then NTP set it right.
      expect(await store.claimWrite('r49-write', 'owner', Number.MAX_SAFE_INTEGER, Date.now() + HOUR)).toBeUndefined();
      await store.settleWrite('r49-write', 'owner', 'done');
      await store.startupCheck();
      const own = [...(await leadsIn(prefix)).keys()].find((field) => !field.endsWith('~')) as string;
      expect((await leadsIn(prefix)).get(own)).toBeGreaterThan(HOUR - 2_000);
      // Two hours and a minute on, by its monotonic clock and its system clock alike (Redis's own clock stays: the
      // replica's system clock now leads it by that much, which is the lead it should report, and no more).
      const passed = 2 * HOUR + 60_000;
      const [realNow, realMonotonic] = [Date.now.bind(Date), performance.now.bind(performance)];
      vi.spyOn(Date, 'now').mockImplementation(() => realNow() + passed);
      vi.spyOn(performance, 'now').mockImplementation(() => realMonotonic() + passed);
      await store.startupCheck();
      const systemLead = Date.now() - (await redisNow());
      expect((await leadsIn(prefix)).get(own)).toBeLessThan(systemLead + 2_000);
    } finally {
      store.close();
    }
  });
});
