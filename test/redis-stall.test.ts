// A Redis that stalls while it checks a confirmation: the call answers "not run", and the same
// token, asked again, runs exactly once, whatever Redis later does with the command it held.
// Against a real redis-server: the store's Lua edge cases (a consume Redis applies late, before
// or after its attempt is marked unrun; two replicas; an older replica's entry), then the test's
// own redis-server paused with SIGSTOP mid-check, for the store and for two built replicas.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import {
  connectRedis,
  RedisSpentStore,
  RedisUnavailableError,
  SPENT_KEPT_PAST_EXPIRY_MS,
  SPENT_STORE_UNAVAILABLE,
  type RedisClient,
} from '../packages/http/src/redis.js';
import { structuredOf, textOf } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { launchService, modernClient, stopService } from './service-process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries `attempt` until it resolves (at most `tries` times, `gapMs` apart); counts, never times. */
async function eventually<T>(attempt: () => Promise<T>, tries = 300, gapMs = 50): Promise<T> {
  let last: unknown;
  for (let index = 0; index < tries; index++) {
    try {
      return await attempt();
    } catch (error) {
      last = error;
      await sleep(gapMs);
    }
  }
  throw last;
}

let redis: RedisServer;
const opened: RedisClient[] = [];
async function client(options: Parameters<typeof connectRedis>[2] = {}): Promise<RedisClient> {
  const made = await connectRedis(redis.url, () => {}, options);
  opened.push(made);
  return made;
}

beforeAll(async () => {
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(opened.map((each) => each.close()));
  await redis?.stop();
});

/**
 * A real connection whose next consume is held back, as a stalled Redis holds it: the caller is
 * told Redis did not answer, and the test decides when (if ever) Redis applies it.
 */
function holding(real: RedisClient) {
  const held: Array<Array<string | number>> = [];
  let holdNext = false;
  const wrapped: RedisClient = {
    command(args) {
      if (holdNext && /^EVAL/.test(String(args[0])) && args[3] !== '') {
        holdNext = false;
        held.push(args);
        return Promise.reject(new RedisUnavailableError('Redis did not answer EVALSHA within 2000 ms'));
      }
      return real.command(args);
    },
    close: () => real.close(),
  };
  return {
    client: wrapped,
    holdNextConsume: () => {
      holdNext = true;
    },
    /** Redis applies the held consume now, as it was sent (its script is cached: see beforeAll). */
    land: () => real.command(held.shift()!),
  };
}

const nonce = () => randomBytes(8).toString('hex');
const future = () => Date.now() + 60_000;

describe('the spent store when a consume goes unanswered (Lua edge cases, real Redis)', () => {
  beforeAll(async () => {
    // A first consume loads the script, so a held EVALSHA, landed later, finds it.
    expect(await new RedisSpentStore(await client(), 'test:stall:').consume(nonce(), future())).toBe(true);
  });

  it('Redis applies the consume after its attempt was marked unrun: it takes nothing; the retry runs once', async () => {
    const real = await client();
    const replica = holding(real);
    const store = new RedisSpentStore(replica.client, 'test:stall:', { retryMs: 1 });
    const id = nonce();
    replica.holdNextConsume();
    await expect(store.consume(id, future())).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    await eventually(async () => expect(store.unsettled).toBe(0));
    expect(await replica.land()).toBe(0);
    expect(await store.consume(id, future())).toBe(true);
    expect(await store.consume(id, future())).toBe(false);
  });

  it('Redis applies the consume before the mark: the next consume on this replica marks it and runs once', async () => {
    const real = await client();
    const replica = holding(real);
    // No background retry before the test's own next call.
    const store = new RedisSpentStore(replica.client, 'test:stall:', { retryMs: 600_000 });
    const id = nonce();
    replica.holdNextConsume();
    await expect(store.consume(id, future())).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    expect(await replica.land()).toBe(1);
    expect(store.unsettled).toBe(1);
    expect(await store.consume(id, future())).toBe(true);
    expect(store.unsettled).toBe(0);
    expect(await store.consume(id, future())).toBe(false);
  });

  it('on two replicas: spent for the other until the mark lands, then exactly one of fifty racing consumes runs', async () => {
    const replica = holding(await client());
    const first = new RedisSpentStore(replica.client, 'test:stall:', { retryMs: 600_000 });
    const second = new RedisSpentStore(await client(), 'test:stall:');
    const id = nonce();
    replica.holdNextConsume();
    await expect(first.consume(id, future())).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    expect(await replica.land()).toBe(1);
    // Only the replica that was not answered knows nothing ran; until it says so, the token is spent.
    expect(await second.consume(id, future())).toBe(false);
    // The first replica's next consume marks its attempt unrun in the same script; the others race it.
    const racers = Array.from({ length: 49 }, () => second.consume(id, future()));
    const results = await Promise.all([first.consume(id, future()), ...racers]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await second.consume(id, future())).toBe(false);
  });

  it('the background retry marks it once Redis answers, so another replica can then run it once', async () => {
    const replica = holding(await client());
    const first = new RedisSpentStore(replica.client, 'test:stall:', { retryMs: 1 });
    const second = new RedisSpentStore(await client(), 'test:stall:');
    const id = nonce();
    replica.holdNextConsume();
    await expect(first.consume(id, future())).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    await eventually(async () => expect(first.unsettled).toBe(0));
    expect(await replica.land()).toBe(0);
    expect(await second.consume(id, future())).toBe(true);
    expect(await first.consume(id, future())).toBe(false);
  });

  it("an older replica's entry (a plain SET NX) stays spent, and a mark never frees it", async () => {
    const real = await client();
    const replica = holding(real);
    const store = new RedisSpentStore(replica.client, 'test:stall:', { retryMs: 600_000 });
    const id = nonce();
    await real.command(['SET', `test:stall:${id}`, '1', 'PX', 60_000]);
    replica.holdNextConsume();
    await expect(store.consume(id, future())).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    expect(await replica.land()).toBe(0);
    expect(await store.consume(id, future())).toBe(false);
    expect(await real.command(['GET', `test:stall:${id}`])).toBe('1');
  });

  it('a mark on an empty entry expires with the token, and an unexpected reply is never a first use', async () => {
    const real = await client();
    const replica = holding(real);
    const store = new RedisSpentStore(replica.client, 'test:stall:', { retryMs: 1 });
    const id = nonce();
    const expiresAt = future();
    replica.holdNextConsume();
    await expect(store.consume(id, expiresAt)).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    await eventually(async () => expect(store.unsettled).toBe(0));
    // A lifetime measured by Redis's clock from when the mark was made: the token's expiry and a day, to the time the call took.
    const expiry = (await real.command(['PEXPIRETIME', `test:stall:${id}`])) as number;
    expect(Math.abs(expiry - expiresAt - SPENT_KEPT_PAST_EXPIRY_MS)).toBeLessThan(2_000);
    expect(await real.command(['HGET', `test:stall:${id}`, 'run'])).toBeNull();

    const liar = new RedisSpentStore({ command: async () => 'QUEUED', close: async () => {} }, 'test:stall:', { retryMs: 600_000 });
    await expect(liar.consume(id, expiresAt)).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    expect(liar.unsettled).toBe(1);
  });

  it('remembers unanswered attempts for at most maxUnanswered tokens, and for none past its expiry', async () => {
    const down: RedisClient = { command: async () => Promise.reject(new RedisUnavailableError('down')), close: async () => {} };
    let now = 1_000;
    const store = new RedisSpentStore(down, 'test:stall:', { maxUnanswered: 1, retryMs: 1, now: () => now });
    await expect(store.consume('a', 5_000)).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    await expect(store.consume('b', 5_000)).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    expect(store.unsettled).toBe(1);
    now = 5_000;
    await eventually(async () => expect(store.unsettled).toBe(0));
  });
});

/** Pauses the test's own redis-server (it keeps its connections, and reads what they hold once resumed). */
async function stalled<T>(during: () => Promise<T>): Promise<T> {
  const pid = redis.pid!;
  process.kill(pid, 'SIGSTOP');
  try {
    return await during();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

describe('the spent store when the real redis-server stalls mid-check (SIGSTOP)', () => {
  it('answers "not run"; once Redis is back, the same nonce is consumed exactly once', async () => {
    const options = { commandTimeoutMs: 300, connectTimeoutMs: 300, minBackoffMs: 20, maxBackoffMs: 200 };
    const store = new RedisSpentStore(await client(options), 'test:stall:', { retryMs: 20 });
    const observer = await client();
    const id = nonce();
    await stalled(() => expect(store.consume(id, future())).rejects.toThrow(SPENT_STORE_UNAVAILABLE));
    // Resumed, Redis applies the consume it held (or already refuses it); either way the attempt ends marked unrun.
    await eventually(async () => expect(store.unsettled).toBe(0));
    expect(await observer.command(['HGET', `test:stall:${id}`, 'run'])).toBeNull();
    expect(await eventually(() => store.consume(id, future()))).toBe(true);
    expect(await store.consume(id, future())).toBe(false);
  });
});

describe('two built replicas on a Redis that stalls while a token is checked', () => {
  const SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
  let sandbox: Sandbox;
  const children: ChildProcess[] = [];
  const urls: string[] = [];
  const mcpClients: ModernClient[] = [];

  async function replica(): Promise<string> {
    const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: SECRET });
    children.push(started.child);
    return started.url;
  }

  async function mcp(url: string): Promise<ModernClient> {
    const made = await modernClient(url, sandbox.keys.full, { info: { name: 'redis-stall', version: '0' } });
    mcpClients.push(made);
    return made;
  }

  beforeAll(async () => {
    sandbox = await startSandbox();
    urls.push(...(await Promise.all([replica(), replica()])));
  }, 30_000);
  afterAll(async () => {
    await Promise.allSettled(mcpClients.map((each) => each.close()));
    await Promise.all(children.map((child) => stopService(child)));
    await sandbox?.close();
  });

  const carried = () => sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send').length;
  const send = (on: ModernClient, params: Record<string, unknown>, confirmationToken?: string) =>
    on.callTool({
      name: 'channel_action',
      arguments: { operationId: 'channel.whatsapp.send', params, ...(confirmationToken ? { confirmationToken } : {}) },
    }) as Promise<Record<string, any>>;
  const previewToken = async (on: ModernClient, params: Record<string, unknown>) => {
    const preview = await send(on, params);
    expect(structuredOf(preview as never).outcome).toBe('preview');
    return structuredOf(preview as never).confirmationToken as string;
  };
  /** Asks with the token until Redis is back for this replica: every answer until then says nothing was run, and nothing was. */
  const untilChecked = async (on: ModernClient, params: Record<string, unknown>, token: string, before: number) =>
    eventually(async () => {
      const result = await send(on, params, token);
      if (result.isError && textOf(result as never).includes('could not be checked')) {
        expect(carried()).toBe(before);
        throw new Error('Redis not back yet for this replica');
      }
      return result;
    });

  it('the stalled attempt answers "not run"; the retry on the same replica runs once; a third try is already used and carried out', async () => {
    const [a, b] = [await mcp(urls[0]!), await mcp(urls[1]!)];
    const params = { msisdn: '081234567890', message: 'Halo dari uji stall' };
    const token = await previewToken(a, params);
    const before = carried();
    const first = await stalled(() => send(b, params, token));
    expect(first.isError).toBe(true);
    expect(textOf(first as never)).toMatch(/nothing was run/);
    expect(carried()).toBe(before);

    const retry = await untilChecked(b, params, token, before);
    expect(retry.isError, textOf(retry as never)).toBeFalsy();
    expect(carried()).toBe(before + 1);

    const third = await send(b, params, token);
    expect(third.isError).toBe(true);
    expect(textOf(third as never)).toMatch(/already used for exactly this channel\.whatsapp\.send, and it was carried out at/);
    expect(carried()).toBe(before + 1);
    // What the first answer told the model to do is what worked.
    expect(textOf(first as never)).toMatch(/nothing was run\. Try again in a few seconds with the same confirmationToken \(or requestState\)\./);
  });

  it('once the stalled replica has marked its attempt unrun, the other replica runs the token once, and only once', async () => {
    const [a, b] = [await mcp(urls[0]!), await mcp(urls[1]!)];
    const params = { msisdn: '081234567890', message: 'Halo lagi dari uji stall' };
    const token = await previewToken(a, params);
    const before = carried();
    const first = await stalled(() => send(b, params, token));
    expect(textOf(first as never)).toMatch(/nothing was run/);
    const observer = await client();
    const entry = `engage:spent:token:${token.split('.')[0]}`;
    // Replica b's background retry marks its attempt unrun once Redis answers it again.
    await eventually(async () => {
      const fields = (await observer.command(['HKEYS', entry])) as string[];
      expect(fields.some((field) => field.startsWith('unrun:')) && !fields.includes('run')).toBe(true);
    });
    const retry = await untilChecked(a, params, token, before);
    expect(retry.isError, textOf(retry as never)).toBeFalsy();
    expect(carried()).toBe(before + 1);
    for (const on of [a, b]) {
      const again = await send(on, params, token);
      expect(again.isError).toBe(true);
      expect(textOf(again as never)).toMatch(/already used for exactly this channel\.whatsapp\.send, (and it was|so it may already have been) carried out/);
    }
    expect(carried()).toBe(before + 1);
  });
});
