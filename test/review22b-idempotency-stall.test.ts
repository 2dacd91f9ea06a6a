// Review 22b: an idempotency key when the real redis-server stalls mid-write (SIGSTOP). The call
// is told, truly, that nothing was sent. Before, the key's reservation stayed in Redis all the
// same, without an answer: when the stall outlasted the command timeout the client dropped the
// connection, so the reservation Redis applied late (its reply lost), or the reservation this
// call made and then had to take back (a send cap's count stalled after it) while the connection
// was being made again, was never taken back. For 24 hours every later call with that key, on
// every replica, then waited 5 s and answered "still being sent, or the server stopped: its
// outcome is unknown", for a write that was never sent, and sent nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { RESERVE, RedisGuardStore, TAKE } from '../packages/http/src/redis-guard-store.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sandbox: Sandbox;
let redis: RedisServer;
const opened: RedisClient[] = [];
const servers: InProcess[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(servers.map((each) => each.close()));
  await Promise.allSettled(opened.map((each) => each.close()));
  await redis?.stop();
  await sandbox?.close();
});

interface Stalling {
  client: RedisClient;
  /** The next EVALSHA of this script stalls Redis. */
  stallOn(sha: string): void;
  /** Redis is running again after the last stall. */
  resumed: Promise<void>;
}

/**
 * A real connection (300 ms command timeout, quick reconnects) that, when told, pauses the real
 * redis-server just before it sends the given script, and resumes it 600 ms later: the command
 * times out, the connection is dropped and made again, and Redis applies what it held late.
 */
async function stallingClient(): Promise<Stalling> {
  const real = await connectRedis(redis.url, () => {}, { commandTimeoutMs: 300, connectTimeoutMs: 300, minBackoffMs: 20, maxBackoffMs: 200 });
  opened.push(real);
  // Loaded, as on a Redis that has served writes before: a script Redis held is then run, not refused NOSCRIPT.
  for (const each of [RESERVE, TAKE]) await real.command(['SCRIPT', 'LOAD', each.source]);
  let target: string | undefined;
  const stalling: Stalling = {
    client: {
      command(args) {
        if (target !== undefined && args[0] === 'EVALSHA' && args[1] === target) {
          target = undefined;
          const pid = redis.pid as number;
          process.kill(pid, 'SIGSTOP');
          stalling.resumed = sleep(600).then(() => void process.kill(pid, 'SIGCONT'));
        }
        return real.command(args);
      },
      close: () => real.close(),
    },
    stallOn: (sha) => void (target = sha),
    resumed: Promise.resolve(),
  };
  return stalling;
}

const sendsOf = (message: string) =>
  sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.params.message === message).length;

/** The call again until the store answers (the connection is being made again); every answer until then says nothing was sent. */
async function whenStoreAnswers(call: () => Promise<Awaited<ReturnType<InProcess['call']>>>, message: string) {
  for (let tries = 0; ; tries++) {
    const result = await call();
    if (!(result.isError && textOf(result).includes("guardrails' shared store")) || tries > 100) return result;
    expect(sendsOf(message)).toBe(0);
    await sleep(50);
  }
}

async function replica(env: Record<string, string>) {
  const stalling = await stallingClient();
  const store = new RedisGuardStore(stalling.client, { stateSecret: STATE_SECRET });
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ...env }, server: { guardStore: () => store } });
  servers.push(server);
  return { server, stalling };
}

describe('review22b: an idempotency key when Redis stalls mid-write', () => {
  it('a reservation whose reply was lost does not make the key answer "unknown" for a write never sent', async () => {
    const { server, stalling } = await replica({});
    const params = { msisdn: '081234567890', message: 'review22b reserve stalled' };
    const args = { idempotencyKey: 'review22b-reserve' };
    stalling.stallOn(RESERVE.sha);
    const first = await server.call('channel.whatsapp.send', params, args);
    expect(first.isError, textOf(first)).toBe(true);
    expect(textOf(first)).toMatch(/nothing was sent/);
    await stalling.resumed;
    expect(sendsOf(params.message)).toBe(0);
    const again = await whenStoreAnswers(() => server.call('channel.whatsapp.send', params, args), params.message);
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(sendsOf(params.message)).toBe(1);
  });

  it('a reservation given back while the connection is being made again (a cap count stalled) is given back once Redis answers', async () => {
    const { server, stalling } = await replica({ ENGAGE_CAP_MESSAGES_PER_DAY: '100' });
    const params = { msisdn: '081234567890', message: 'review22b take stalled' };
    const args = { idempotencyKey: 'review22b-take' };
    stalling.stallOn(TAKE.sha);
    const first = await server.call('channel.whatsapp.send', params, args);
    expect(first.isError, textOf(first)).toBe(true);
    expect(textOf(first)).toMatch(/nothing was sent/);
    await stalling.resumed;
    expect(sendsOf(params.message)).toBe(0);
    const again = await whenStoreAnswers(() => server.call('channel.whatsapp.send', params, args), params.message);
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(sendsOf(params.message)).toBe(1);
  });
});
