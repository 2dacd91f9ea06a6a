// review9 (hostile review of b620a0f): the shared write mark when Redis misbehaves for a moment.
// 1. CLAIM_WRITE ran in Redis, but its reply was lost (the 2 s command timeout): the call is told
//    "nothing was sent" (true), yet the orphaned mark says "still being sent" to every later call
//    of exactly this write, on every replica, for 10 minutes, then "may have been sent".
// 2. The 'done' settle was fire-and-forget and never retried (now awaited and tried 3 times): one failed EVALSHA leaves the mark in
//    flight, and another replica says "still being sent by this server" for 10 minutes.
// 3. A write that needs no yes (ENGAGE_CONFIRM=none), with no caps and no idempotencyKey, did not
//    need Redis before b620a0f; now Redis down refuses it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { connectRedis, RedisUnavailableError, type RedisClient } from '../packages/http/src/redis.js';
import { CLAIM_WRITE, RedisGuardStore, SETTLE_AND_APPEND, SETTLE_WRITE } from '../packages/http/src/redis-guard-store.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');

class Flaky implements RedisClient {
  loseClaimReply = false;
  failSettle = false;
  down = false;
  constructor(private readonly real: RedisClient) {}
  async command(args: Array<string | number>): Promise<unknown> {
    if (this.down) throw new RedisUnavailableError('Redis is not connected (reconnecting)');
    const script = args[0] === 'EVALSHA' || args[0] === 'EVAL' ? args[1] : undefined;
    if (this.loseClaimReply && (script === CLAIM_WRITE.sha || script === CLAIM_WRITE.source)) {
      await this.real.command(args); // it ran in Redis (a NOSCRIPT throws before this flag is spent)...
      this.loseClaimReply = false;
      throw new RedisUnavailableError('Redis did not answer EVALSHA within 2000 ms'); // ...its reply came too late
    }
    // The settle of a write that went out appends its audit line in the same script (SETTLE_AND_APPEND).
    if (this.failSettle && [SETTLE_WRITE, SETTLE_AND_APPEND].some((each) => script === each.sha || script === each.source)) {
      this.failSettle = false;
      throw new RedisUnavailableError('Redis connection lost');
    }
    return this.real.command(args);
  }
  close() {
    return this.real.close();
  }
}

let sandbox: Sandbox;
let redis: RedisServer;
let real: RedisClient;
const servers: InProcess[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  real = await connectRedis(redis.url);
});
afterEach(async () => {
  await Promise.allSettled(servers.splice(0).map((each) => each.close()));
});
afterAll(async () => {
  await real?.close();
  await redis?.stop();
  await sandbox?.close();
});

const sendsOf = (message: string) =>
  sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.params.message === message).length;
const tokenOf = (result: unknown) => structuredOf(result as never).confirmationToken as string | undefined;

async function replica(flaky: Flaky, env: Record<string, string> = {}) {
  const store = new RedisGuardStore(flaky, { stateSecret: STATE_SECRET });
  const server = await inProcess(DOMAINS.channel!, sandbox, { env, server: { guardStore: () => store } });
  servers.push(server);
  return server;
}

describe('review9: the shared mark when Redis blinks', () => {
  it("a claim whose reply was lost leaves no 'still being sent' behind for a write that was never sent", async () => {
    const flaky = new Flaky(real);
    const server = await replica(flaky);
    const params = { msisdn: '081234567890', message: 'review9 lost claim reply' };
    const t1 = tokenOf(await server.call('channel.whatsapp.send', params))!;
    flaky.loseClaimReply = true;
    const first = await server.call('channel.whatsapp.send', params, { confirmationToken: t1 });
    expect(first.isError).toBe(true);
    expect(sendsOf(params.message)).toBe(0);
    // The person is asked again: nothing was sent, so a fresh preview (and token) is the answer.
    const again = await server.call('channel.whatsapp.send', params);
    expect(textOf(again)).not.toMatch(/still being sent/);
    expect(tokenOf(again), textOf(again)).toBeDefined();
  });

  it("a write carried out whose 'done' settle failed is not 'still being sent' on another replica", async () => {
    const flakyA = new Flaky(real);
    const a = await replica(flakyA);
    const b = await replica(new Flaky(real));
    const params = { msisdn: '081234567890', message: 'review9 lost settle' };
    const t1 = tokenOf(await a.call('channel.whatsapp.send', params))!;
    flakyA.failSettle = true;
    const sent = await a.call('channel.whatsapp.send', params, { confirmationToken: t1 });
    expect(sent.isError, textOf(sent)).toBeFalsy();
    expect(sendsOf(params.message)).toBe(1);
    const preview = await b.call('channel.whatsapp.send', params);
    expect(textOf(preview)).not.toMatch(/still being sent/);
    expect(textOf(preview)).toMatch(/already sent exactly this/);
  });

  it('a write that needs no yes, with no caps and no idempotencyKey, is not refused because Redis is down', async () => {
    const flaky = new Flaky(real);
    const server = await replica(flaky, { ENGAGE_CONFIRM: 'none' });
    const params = { msisdn: '081234567890', message: 'review9 ungated, redis down' };
    flaky.down = true;
    const result = await server.call('channel.whatsapp.send', params);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sendsOf(params.message)).toBe(1);
  });
});
