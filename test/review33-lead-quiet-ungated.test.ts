// Review 33: a write that needs no yes, in flight on one replica when Redis lost its mark (a
// FLUSHALL), was sent again by the other replica during the quiet that follows a loss: claim() sent
// such a write without its mark whenever the store threw. Claims paused (ClaimsPaused) now refuse
// it too: nothing is sent, and the model is told to ask again in a minute or two.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, textOf, until } from './helpers.js';
import { connectRedis } from '../packages/http/src/redis.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let redis: RedisServer;
const { children, clients } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis } = rig);
});

it('a write needing no yes, in flight on one replica when Redis loses its mark, is not sent again by the other during the quiet', async () => {
  const env = {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
    ENGAGE_CONFIRM: 'none',
  };
  const started = [launchService(env), launchService(env)];
  children.push(...started.map((each) => each.child));
  const [a, b] = await Promise.all(started.map(async (each) => modernClient(await each.url, sandbox.keys.full)));
  clients.push(a!, b!);
  sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 4_000 });
  const params = { msisdn: '081234567890', message: 'once only' };
  const first = a!.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } } as never);
  await until('the first send at the API', () => requestsAtApi(sandbox, SEND) === 1);
  const admin = await connectRedis(redis.url);
  await admin.command(['FLUSHALL']);
  await admin.close();
  const second = (await b!.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } } as never)) as Record<string, any>;
  await first;
  expect(requestsAtApi(sandbox, SEND), textOf(second as never)).toBe(1);
}, 40_000);
