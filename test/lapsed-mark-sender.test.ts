// A sender paused past its mark's lease. A server marks a write in flight in the state directory
// and renews the mark every minute; one not renewed for 3 minutes (by the system clock and the time
// since boot) reads to any other server as a sender that stopped with the write out: an unknown
// outcome, which a write needing no yes (or a new yes) goes past. A sender that was only paused
// (SIGSTOP, a laptop asleep) while it waited to send (a 429's Retry-After) then woke and sent the
// same write again. Now a sender that has not renewed its mark for 30 s checks that the mark is
// still its own before each attempt, and sends nothing when another server has taken it over.
// Two built channel servers over stdio on one state directory; the pause is shown as every clock
// of the machine reads after one: the system clock and the time since boot moved on 4 minutes.
import { afterEach, describe, expect, it } from 'vitest';
import { connectRedis } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { MarkTakenOver, WRITE_MARK_LEASE_MS } from '../shared/src/call/shared-mark.js';
import { createLogger } from '../shared/src/safe/log.js';
import { ApiClient } from '../shared/src/upstream/api-client.js';
import { startRedis } from './redis-server.js';
import { clockShifter } from './helpers/clock-shifter.js';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('lapsed-mark', '62813771');
const servers: LaunchedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('a sender paused past its lease while it waited to send', () => {
  it('sends nothing once another server has taken the same write over, and says so', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const clocks = clockShifter(root, { sinceBoot: true });
    const [paused, other] = await Promise.all([launchChannel(sandbox(), dir, 'none', clocks.env), launchChannel(sandbox(), dir, 'none', clocks.env)]);
    servers.push(paused!, other!);
    const write = params(1);
    const before = { sends: sends(), requests: requestsAtApi(sandbox(), SEND) };
    sandbox().injectFault({ kind: 'rate-limit', retryAfter: '6', operationId: SEND, times: 1 });
    const first = callSend(paused!, { params: write });
    await until('the first send is answered 429', () => requestsAtApi(sandbox(), SEND) > before.requests);
    // The machine's clocks, as they read after the first server was paused for 4 minutes.
    clocks.set(4 * 60_000);
    const taken = await callSend(other!, { params: write });
    expect(taken.isError, textOf(taken)).toBeFalsy();
    expect(sends()).toBe(before.sends + 1);
    const woke = await first;
    expect(sends(), 'the paused sender sent the same write again').toBe(before.sends + 1);
    expect(woke.isError).toBe(true);
    expect(textOf(woke)).toMatch(/another server/);
    expect(textOf(woke)).toMatch(/was not sent by this call/);
    expect(structuredOf(woke)).toMatchObject({ outcome: 'refused' });
  });

  it('still sends when nobody took its write over', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const clocks = clockShifter(root, { sinceBoot: true });
    const paused = await launchChannel(sandbox(), dir, 'none', clocks.env);
    servers.push(paused);
    const before = { sends: sends(), requests: requestsAtApi(sandbox(), SEND) };
    sandbox().injectFault({ kind: 'rate-limit', retryAfter: '2', operationId: SEND, times: 1 });
    const first = callSend(paused, { params: params(2) });
    await until('the first send is answered 429', () => requestsAtApi(sandbox(), SEND) > before.requests);
    clocks.set(4 * 60_000);
    const result = await first;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sends()).toBe(before.sends + 1);
  });
});

describe("renewing a mark says whether it is still the owner's in flight", () => {
  const T = Date.parse('2026-11-01T12:00:00Z');
  const takeOver = async (store: FileGuardStore | RedisGuardStore) => {
    expect(await store.claimWrite('w', 'paused', T - 1, T)).toBeUndefined();
    expect(await store.renewWrite('w', 'paused', T + 1_000)).toBe(true);
    expect(await store.renewWrite('w', 'someone-else', T + 2_000)).toBe(false);
    // Not renewed for the lease: an unknown outcome, which a write needing no yes goes past.
    const later = T + 1_000 + WRITE_MARK_LEASE_MS + 1;
    expect(await store.claimWrite('w', 'other', Number.MAX_SAFE_INTEGER, later, later)).toBeUndefined();
    expect(await store.renewWrite('w', 'paused', later + 1)).toBe(false);
    expect(await store.renewWrite('w', 'other', later + 1)).toBe(true);
  };

  it('the state directory', async () => {
    await takeOver(new FileGuardStore(stateDir(), undefined, () => T));
  });

  it('Redis', async () => {
    const redis = await startRedis();
    const client = await connectRedis(redis.url);
    try {
      await takeOver(new RedisGuardStore(client, { stateSecret: new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes'), callerClock: true }));
    } finally {
      await client.close();
      await redis.stop();
    }
  });
});

describe("the API client's check before each attempt (remote mode: inside the key's upstream slot)", () => {
  it('sends nothing when the check throws, and gives the slot back', async () => {
    const api = new ApiClient(
      { apiKey: sandbox().keys.full, baseUrl: new URL(sandbox().baseUrl), authHeader: 'x-api-key', timeoutMs: 5_000, maxRetryWaitSeconds: 1 },
      createLogger('test', 'error', []),
    );
    let held = 0;
    const slots = {
      acquire: async () => {
        held++;
        return () => {
          held--;
        };
      },
    };
    const before = requestsAtApi(sandbox(), SEND);
    const request = {
      method: 'POST' as const,
      path: '/api/channel/v1/notification/send/whatsapp',
      template: '/api/channel/v1/notification/send/whatsapp',
      body: params(3),
      safe: false,
    };
    const refused = api.request(request, {
      credentials: { apiKey: sandbox().keys.full, slots },
      beforeSend: async () => {
        throw new MarkTakenOver('taken over');
      },
    });
    await expect(refused).rejects.toBeInstanceOf(MarkTakenOver);
    expect(held).toBe(0);
    expect(requestsAtApi(sandbox(), SEND)).toBe(before);
    // The same request with a check that passes reaches the API (the one above was really held back).
    await api.request(request, { credentials: { apiKey: sandbox().keys.full, slots }, beforeSend: async () => undefined });
    expect(requestsAtApi(sandbox(), SEND)).toBe(before + 1);
    expect(held).toBe(0);
    await api.close();
  });
});
