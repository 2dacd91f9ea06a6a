// The attempt's own timer and listener (api-client.ts attemptSignal), which replaced AbortSignal.timeout/any:
// a write is never abandoned when the host cancels, a read is cancelled whenever the host's signal is aborted
// before its request leaves, timeouts are still timeouts, and nothing is left behind on a long-lived signal.
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../shared/src/model/errors.js';
import { createLogger } from '../shared/src/safe/log.js';
import { ApiClient } from '../shared/src/upstream/api-client.js';
import { Pool } from '../shared/src/upstream/undici-pool.js';

let server: Server;
let baseUrl: URL;
let received = 0;
/** How long the server waits before it answers, and whether it trickles its body. */
let delayMs = 0;
let trickle = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    req.resume();
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (!trickle) return void res.end(JSON.stringify({ status: 200, errorCode: 0, data: { ok: true } }));
      res.write('{"status":200,"errorCode":0,"data":"');
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('x')), 20);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api`);
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(timeoutMs = 5_000) {
  return new ApiClient(
    { apiKey: 'eng_live_review4_client', baseUrl, authHeader: 'x-api-key', timeoutMs, maxRetryWaitSeconds: 1 },
    createLogger('test', 'error', []),
  );
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

describe("one attempt's signal", () => {
  it('a read whose caller cancels while the connection pool is still being set up is cancelled, and never sent', async () => {
    delayMs = 0;
    trickle = false;
    const api = client();
    let release = () => {};
    // The first call loads undici: the host may cancel in that time.
    (api as unknown as { dispatcher: Promise<unknown> }).dispatcher = new Promise((resolve) => {
      release = () => resolve(new Pool(baseUrl.origin));
    });
    const before = received;
    const caller = new AbortController();
    const pending = api.request({ method: 'GET', path: '/contacts', safe: true }, { signal: caller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    caller.abort();
    release();
    const error = await failure(pending);
    expect(error.kind).toBe('cancelled');
    expect(received).toBe(before);
    await api.close();
  });

  it("a write runs to its answer when the host cancels, and leaves no listener on the host's signal", async () => {
    delayMs = 150;
    trickle = false;
    const api = client();
    const caller = new AbortController();
    const pending = api.request({ method: 'POST', path: '/messages', body: { text: 'hi' }, safe: false }, { signal: caller.signal });
    setTimeout(() => caller.abort(), 50);
    await expect(pending).resolves.toEqual({ ok: true });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    await api.close();
  });

  it('many calls with one long-lived caller signal leave no listener on it', async () => {
    delayMs = 0;
    trickle = false;
    const api = client();
    const caller = new AbortController();
    for (let index = 0; index < 50; index++) await api.request({ method: 'GET', path: '/contacts', safe: true }, { signal: caller.signal });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    await api.close();
  });

  it('a write that times out is a timeout that may have happened; a trickling body is cut at the deadline', async () => {
    trickle = false;
    delayMs = 1_000;
    const api = client(200);
    const write = await failure(api.request({ method: 'POST', path: '/messages', body: {}, safe: false }, { signal: new AbortController().signal }));
    expect(write.kind).toBe('timeout');
    expect(write.details.mayHaveHappened).toBe(true);
    delayMs = 0;
    trickle = true;
    // The body never ends: only the deadline returns this call, as a timeout.
    const trickled = await failure(api.request({ method: 'POST', path: '/messages', body: {}, safe: false }));
    expect(trickled.kind).toBe('timeout');
    expect(trickled.details.mayHaveHappened).toBe(true);
    await api.close();
  });
});

// A request that waited for one of the pool's 16 connections (all busy with other calls: in remote
// mode, other tenants') until its deadline never left this server, but was told "The API did not
// answer within … ms" (review35-tenants). It is now told it was not sent: no connection to the API
// was free or opened in time. A request that was sent and then got no answer reads as before.
describe('a request that timed out waiting for a connection', () => {
  it('is told it was not sent, not that the API did not answer', async () => {
    // Reads take the configured 9 s deadline; a preview's look-up at most 4 s (LOOKUP_TIMEOUT_MS).
    const api = new ApiClient(
      { apiKey: 'eng_live_queued_timeout', baseUrl, authHeader: 'x-api-key', timeoutMs: 9_000, maxRetryWaitSeconds: 1 },
      createLogger('test', 'error', []),
    );
    delayMs = 6_000;
    trickle = false;
    received = 0;
    const blockers = Array.from({ length: 16 }, () => api.request({ method: 'GET', path: '/held', safe: true }));
    while (received < 16) await new Promise((resolve) => setTimeout(resolve, 20));
    // Every connection is busy for 6 s: the look-up waits in the pool's queue past its 4 s.
    const queued = await failure(api.request({ method: 'GET', path: '/queued', safe: true, lookup: true }));
    expect(received).toBe(16);
    expect(queued.kind).toBe('timeout');
    expect(queued.message).toMatch(/^The request was not sent within 4000 ms: no connection to the API was free or opened in time/);
    expect(queued.message).not.toMatch(/did not answer/);
    await Promise.all(blockers);
    await api.close();
  }, 20_000);

  it('a request sent that got no answer in time reads as before', async () => {
    const api = new ApiClient(
      { apiKey: 'eng_live_queued_timeout', baseUrl, authHeader: 'x-api-key', timeoutMs: 300, maxRetryWaitSeconds: 1 },
      createLogger('test', 'error', []),
    );
    delayMs = 2_000;
    trickle = false;
    const slow = await failure(api.request({ method: 'GET', path: '/slow', safe: true, lookup: true }));
    expect(slow.message).toMatch(/^The API did not answer within 300 ms/);
    await api.close();
  });
});
