// Review 32 (Redis, clock skew): the guardrails' records and the spent store's nonces were given
// their expiry as a time on the replica's own clock (PEXPIREAT). On a replica whose clock is behind
// by more than a record's life (a VM started with its clock a day off), that time was already past
// by Redis's clock, so Redis deleted the record as it was written: an idempotency key held nothing
// and its write went out again, a send cap counted nothing, a spent confirmation was free again.
// Each expiry is now a lifetime (PEXPIRE), measured by Redis's clock from when it is written.
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { RedisSpentStore, type RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { requestsAtApi, structuredOf, textOf } from './helpers.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';
import { clockShifter } from './helpers/clock-shifter.js';

const SEND = 'channel.whatsapp.send';
const STATE_SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
const HOUR = 60 * 60 * 1000;
const A_DAY_BEHIND = -27 * HOUR;
let sandbox: Sandbox;
let redis: RedisServer;
let client: RedisClient;
let dir: string;
const { children, clients } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis, admin: client, dir } = rig);
});
afterAll(() => {
  vi.restoreAllMocks();
});

describe('a replica whose clock is a day behind Redis', () => {
  it('an idempotency key used twice sends its write once', async () => {
    const clock = clockShifter(dir);
    clock.set(A_DAY_BEHIND);
    const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: STATE_SECRET, ENGAGE_CONFIRM: 'none' };
    const started = launchService({ ...env, ...clock.env });
    children.push(started.child);
    const slow = await modernClient(await started.url, sandbox.keys.full);
    clients.push(slow);
    const send = () =>
      slow.callTool({
        name: 'channel_action',
        arguments: { operationId: SEND, params: { msisdn: '081234567891', message: 'once per key' }, idempotencyKey: 'order-32' },
      } as never) as Promise<Record<string, any>>;
    const before = requestsAtApi(sandbox, SEND);
    const first = await send();
    expect(structuredOf(first as never).outcome, textOf(first as never)).toBe('done');
    const again = await send();
    expect(requestsAtApi(sandbox, SEND) - before, textOf(again as never)).toBe(1);
  }, 60_000);

  it("a send cap's counter and an idempotency record outlive the write that made them", async () => {
    const realNow = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(realNow + A_DAY_BEHIND);
    const store = new RedisGuardStore(client, { stateSecret: new TextEncoder().encode(STATE_SECRET) });
    const slowNow = Date.now();
    expect(await store.take('messages:slow-replica:day', 3, 10, slowNow + 26 * HOUR)).toEqual({ taken: true, count: 3 });
    expect(await store.count('messages:slow-replica:day')).toBe(3);
    expect(await store.reserve('slow-replica:key', { operationId: SEND, digest: 'digest', at: slowNow }, slowNow + 24 * HOUR)).toBeUndefined();
    expect(await store.lookup('slow-replica:key')).toMatchObject({ operationId: SEND });
    vi.restoreAllMocks();
  });

  it('a spent confirmation stays spent', async () => {
    const slowNow = Date.now() + A_DAY_BEHIND;
    const spent = new RedisSpentStore(client, 'engage:spent:', { now: () => slowNow });
    expect(await spent.consume('token:slow-replica', slowNow + 5 * 60_000)).toBe(true);
    expect(await spent.consume('token:slow-replica', slowNow + 5 * 60_000)).toBe(false);
  });
});
