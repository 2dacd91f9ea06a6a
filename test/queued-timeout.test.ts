// A request that waited for one of the pool's 16 connections (all busy with other calls: in remote
// mode, other tenants') until its deadline never left this server, but was told "The API did not
// answer within … ms" (review35-tenants). It is now told it was not sent: no connection to the API
// was free or opened in time. A request that was sent and then got no answer reads as before.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../shared/src/model/errors.js';
import { createLogger } from '../shared/src/safe/log.js';
import { ApiClient } from '../shared/src/upstream/api-client.js';

let server: Server;
let baseUrl: URL;
let received = 0;
/** How long the server holds each request before it answers. */
let holdMs = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    req.resume();
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 200, errorCode: 0, data: { ok: true } }));
    }, holdMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api`);
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

describe('a request that timed out waiting for a connection', () => {
  it('is told it was not sent, not that the API did not answer', async () => {
    // Reads take the configured 9 s deadline; a preview's look-up at most 4 s (LOOKUP_TIMEOUT_MS).
    const api = new ApiClient(
      { apiKey: 'eng_live_queued_timeout', baseUrl, authHeader: 'x-api-key', timeoutMs: 9_000, maxRetryWaitSeconds: 1 },
      createLogger('test', 'error', []),
    );
    holdMs = 6_000;
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
    holdMs = 2_000;
    const slow = await failure(api.request({ method: 'GET', path: '/slow', safe: true, lookup: true }));
    expect(slow.message).toMatch(/^The API did not answer within 300 ms/);
    await api.close();
  });
});
