// Review 32 (Redis misconfigured): a Redis with a memory limit and an eviction policy (allkeys-lru,
// volatile-lru: every key the service writes has a lifetime, so volatile-* takes them too) drops
// keys when it is full, silently: a write's mark, an idempotency key's record or a spent
// confirmation gone lets the same write go out again, and nothing says so. The service started on
// such a Redis and ran on one made so later (CONFIG SET, a failover to a replica configured
// otherwise). It now refuses to start on one, and refuses writes (nothing sent, the operator named)
// while the Redis it runs on evicts; with noeviction a full Redis refuses writes, which fails closed.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { RedisClient } from '../packages/http/src/redis.js';
import { requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let redis: RedisServer;
let admin: RedisClient;
const { children, clients } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis, admin } = rig);
});

const env = () => ({
  ENGAGE_BASE_URL: sandbox.baseUrl,
  ENGAGE_REDIS_URL: redis.url,
  ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
  ENGAGE_CONFIRM: 'none',
});

const evicting = (policy: string) => admin.command(['CONFIG', 'SET', 'maxmemory', '256mb', 'maxmemory-policy', policy]);

describe('a Redis that evicts keys when it is full', () => {
  it('the service does not start on one, and says what to set', async () => {
    await evicting('allkeys-lru');
    try {
      const started = launchService(env());
      children.push(started.child);
      const ended = await Promise.race([started.exit.then((code) => `exited with ${code}`), started.url.then(() => 'listening')]);
      expect(ended, started.stderr.join('')).toBe('exited with 2');
      expect(started.stderr.join('')).toMatch(/maxmemory-policy noeviction/);
    } finally {
      await evicting('noeviction');
    }
  }, 30_000);

  it('a service already running refuses writes while its Redis evicts (nothing sent), and sends again once it does not', async () => {
    const started = launchService(env());
    children.push(started.child);
    const client = await modernClient(await started.url, sandbox.keys.full);
    clients.push(client);
    const send = (message: string) =>
      client.callTool({ name: 'channel_action', arguments: { operationId: SEND, params: { msisdn: '081234567892', message } } } as never) as Promise<
        Record<string, any>
      >;
    expect(structuredOf((await send('before')) as never).outcome).toBe('done');
    await evicting('volatile-lru');
    const before = requestsAtApi(sandbox, SEND);
    let refused: Record<string, any> | undefined;
    await until('a write refused while Redis evicts', async () => {
      const reply = await send(`while evicting ${Date.now()}`);
      if (reply.isError) refused = reply;
      return reply.isError === true;
    });
    expect(textOf(refused as never)).toMatch(/maxmemory-policy noeviction/);
    expect(textOf(refused as never)).toMatch(/Nothing was sent|nothing was sent/);
    const sentWhileEvicting = requestsAtApi(sandbox, SEND) - before;
    await evicting('noeviction');
    await until('a write sent again once Redis does not evict', async () => structuredOf((await send(`after ${Date.now()}`)) as never).outcome === 'done');
    expect(requestsAtApi(sandbox, SEND) - before).toBe(sentWhileEvicting + 1);
  }, 60_000);
});
