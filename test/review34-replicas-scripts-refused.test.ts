// Review 34 (replicas): a Redis user that may not run the guardrails' scripts, or whose scripts may
// not call TIME (an ACL on a managed Redis: -@scripting, -time, or a proxy that refuses EVAL), let
// the service start without a word, though every write's mark script then failed: every write on
// every replica refused, "ask again in a minute", while the operator saw nothing in the log. The
// start-up check now runs a mark script and refuses the start, saying what Redis answered.
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const { server } = redisPerFile(0, {
  users: ['notime on >notime-pass ~* &* +@all -time', 'noscripts on >noscripts-pass ~* &* +@all -@scripting'],
});
// Each test's own connections, as each user.
const clients: RedisClient[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

async function storeAs(user: string): Promise<RedisGuardStore> {
  const client = await connectRedis(server().url.replace('redis://', `redis://${user}:${user}-pass@`));
  clients.push(client);
  return new RedisGuardStore(client, { stateSecret: STATE_SECRET, prefix: `engage-${user}:` });
}

describe("a Redis user the guardrails' scripts are refused to", () => {
  it.each([
    ['notime', /can't run this command|NOPERM/],
    ['noscripts', /NOPERM/],
  ])('%s: the start is refused, naming what Redis answered', async (user, answer) => {
    const store = await storeAs(user);
    // What a running service would meet: every write's mark script refused.
    await expect(store.claimWrite('a-write', 'an-owner', Date.now(), Date.now())).rejects.toThrow(/did not answer/);
    const { refuse } = await storeAs(user).then((fresh) => fresh.startupCheck());
    expect(refuse).toMatch(answer);
    expect(refuse).toMatch(/every write would be refused/);
  });
});
