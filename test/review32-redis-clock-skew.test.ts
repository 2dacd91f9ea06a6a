// Review 32 (Redis, clock skew between replicas): a write's mark in Redis was stamped by its
// replica's own clock, its lease judged by the reading replica's, and the "sent since the yes" test
// compared that stamp with a yes dated by another replica. Two replicas whose clocks are minutes
// apart then sent the same write twice: a write still at the API, marked by a replica five minutes
// behind, read as one whose replica stopped three minutes ago; and a write sent after a yes, marked
// by that slow replica, read as sent before it. The marks are now stamped and judged by Redis TIME,
// one clock for every replica. A yes is dated before anything reaches Redis, by the clock of the
// replica that gave it, which may be another than the one that uses it: each replica tells Redis
// how far its clock leads Redis's, and a yes is read by the most any replica leads, so a yes given
// on a replica five minutes fast is never read as given after a send that came after it.
import { describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';
import { clockShifter } from './helpers/clock-shifter.js';

const SEND = 'channel.whatsapp.send';
const FIVE_MINUTES = 5 * 60_000;
let sandbox: Sandbox;
let redis: RedisServer;
let dir: string;
const { children, clients } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis, dir } = rig);
});

/** Two replicas on one Redis: `right` with the system clock, `slow` with its clock five minutes behind (or `shift` off). */
async function replicas(confirm: string, shift = -FIVE_MINUTES): Promise<{ right: ModernClient; slow: ModernClient }> {
  const env = {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
    ENGAGE_CONFIRM: confirm,
  };
  const clock = clockShifter(dir);
  clock.set(shift);
  const started = [launchService(env), launchService({ ...env, ...clock.env })];
  children.push(...started.map((each) => each.child));
  const [right, slow] = await Promise.all(started.map(async (each) => modernClient(await each.url, sandbox.keys.full)));
  clients.push(right!, slow!);
  return { right: right!, slow: slow! };
}

const send = (on: ModernClient, message: string, confirmationToken?: string) =>
  on.callTool({
    name: 'channel_action',
    arguments: { operationId: SEND, params: { msisdn: '081234567890', message }, ...(confirmationToken ? { confirmationToken } : {}) },
  } as never) as Promise<Record<string, any>>;

describe('replicas whose clocks are five minutes apart, on one Redis', () => {
  it('a write still at the API on the slow replica is not sent again by the other (its mark is not taken for a lapsed one)', async () => {
    const { right, slow } = await replicas('none');
    sandbox.injectFault({ kind: 'delay', delayMs: 2_000, operationId: SEND });
    const before = requestsAtApi(sandbox, SEND);
    const first = send(slow, 'held at the API on the slow replica');
    await until('the first send at the API', () => requestsAtApi(sandbox, SEND) > before);
    const again = await send(right, 'held at the API on the slow replica');
    expect((await first).isError, textOf((await first) as never)).toBeFalsy();
    expect(requestsAtApi(sandbox, SEND) - before, textOf(again as never)).toBe(1);
    expect(textOf(again as never)).toMatch(/still being sent by a replica of this service/);
  }, 60_000);

  it('a yes given on one replica sends nothing once the slow replica sent the same write after it', async () => {
    const { right, slow } = await replicas('all');
    const message = 'agreed to on both replicas';
    const preview = await send(right, message);
    expect(structuredOf(preview as never).outcome, textOf(preview as never)).toBe('preview');
    const before = requestsAtApi(sandbox, SEND);
    const slowPreview = await send(slow, message);
    const sent = await send(slow, message, structuredOf(slowPreview as never).confirmationToken as string);
    expect(structuredOf(sent as never).outcome, textOf(sent as never)).toBe('done');
    const late = await send(right, message, structuredOf(preview as never).confirmationToken as string);
    expect(requestsAtApi(sandbox, SEND) - before, textOf(late as never)).toBe(1);
    expect(textOf(late as never)).toMatch(/after this confirmation was given/);
  }, 60_000);

  it('a yes given on a replica five minutes fast, used on another, sends nothing once the same write went out after it', async () => {
    const { right, slow: fast } = await replicas('all', FIVE_MINUTES);
    const message = 'agreed to on the fast replica first';
    const preview = await send(fast, message);
    expect(structuredOf(preview as never).outcome, textOf(preview as never)).toBe('preview');
    const before = requestsAtApi(sandbox, SEND);
    const rightPreview = await send(right, message);
    const sent = await send(right, message, structuredOf(rightPreview as never).confirmationToken as string);
    expect(structuredOf(sent as never).outcome, textOf(sent as never)).toBe('done');
    const late = await send(right, message, structuredOf(preview as never).confirmationToken as string);
    expect(requestsAtApi(sandbox, SEND) - before, textOf(late as never)).toBe(1);
    expect(textOf(late as never)).toMatch(/after this confirmation was given/);
  }, 60_000);

  it("a replica whose clock is off Redis's by minutes says so when it starts", async () => {
    const clock = clockShifter(dir);
    clock.set(FIVE_MINUTES);
    const started = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      ENGAGE_REDIS_URL: redis.url,
      ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
      ...clock.env,
    });
    children.push(started.child);
    await started.url;
    await until("the warning of the replica's clock", () => /this replica's clock is 300 s ahead of Redis's/.test(started.stderr.join('')));
  }, 60_000);
});
