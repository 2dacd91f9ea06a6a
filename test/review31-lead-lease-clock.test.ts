// A replica dates its writes by forwardNow (journal.ts): after its system clock is set back (NTP
// correcting a clock that ran fast), the highest time it read stands until the clock passes it. The
// claim judged another replica's mark by that same time: a mark renewed a moment ago looked older
// than its 3-minute lease, so it read as a replica that stopped with the write out ("unknown"), and
// the same write, still at the API, was sent again (for a write that needs no yes, nothing else
// refuses it on another replica). A mark's lease is now judged by the system clock as it reads now.
import { expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, textOf, until } from './helpers.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';
import { clockShifter } from './helpers/clock-shifter.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let redis: RedisServer;
let dir: string;
const { children, clients } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis, dir } = rig);
});

it('a replica whose clock was set back five minutes refuses the same send still at the API on another replica', async () => {
  const env = {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
    ENGAGE_CONFIRM: 'none',
  };
  const clock = clockShifter(dir);
  const started = [launchService(env), launchService({ ...env, ...clock.env })];
  children.push(...started.map((each) => each.child));
  const [a, b] = await Promise.all(started.map(async (each) => modernClient(await each.url, sandbox.keys.full, { info: { name: 'lease', version: '0' } })));
  clients.push(a!, b!);
  const call = (on: ModernClient, message: string) =>
    on.callTool({ name: 'channel_action', arguments: { operationId: SEND, params: { msisdn: '081234567890', message } } } as never) as Promise<
      Record<string, any>
    >;
  // Replica b's clock ran five minutes fast while it sent a write; then it is set right.
  clock.set(5 * 60_000);
  expect((await call(b!, 'while the clock ran fast')).isError).toBeFalsy();
  clock.set(0);
  sandbox.injectFault({ kind: 'delay', delayMs: 2_000, operationId: SEND });
  const before = requestsAtApi(sandbox, SEND);
  const first = call(a!, 'asked again on the replica whose clock was set back');
  await until('the first send at the API', () => requestsAtApi(sandbox, SEND) > before);
  const again = await call(b!, 'asked again on the replica whose clock was set back');
  expect((await first).isError, textOf((await first) as never)).toBeFalsy();
  expect(requestsAtApi(sandbox, SEND) - before, textOf(again as never)).toBe(1);
  expect(again.isError).toBe(true);
  expect(textOf(again as never)).toMatch(/still being sent by a replica of this service/);
}, 60_000);
