// A stopping server begins no attempt of a write (review35-cancel: ApiClient.stopWrites). The check
// ran before the attempt's awaits (the shared mark's renewal, `beforeSend`; the first load of the
// HTTP client): a stop that landed during either still let the write out (review36-calls). It is
// now checked again right before the request is handed to the connection pool.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../shared/src/model/errors.js';
import { createLogger } from '../shared/src/safe/log.js';
import { ApiClient } from '../shared/src/upstream/api-client.js';

let server: Server;
let baseUrl: URL;
let received = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 200, errorCode: 0, data: { ok: true } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api`);
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a stop that lands while a write is about to be sent', () => {
  it('sends nothing: the write is refused as not sent', async () => {
    const api = new ApiClient(
      { apiKey: 'eng_live_stop_before_dispatch', baseUrl, authHeader: 'x-api-key', timeoutMs: 5_000, maxRetryWaitSeconds: 1 },
      createLogger('test', 'error', []),
    );
    received = 0;
    // The stop lands during the mark's renewal, the last await before the attempt.
    const beforeSend = async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      api.stopWrites();
    };
    const failure = await api.request({ method: 'POST', path: '/send', safe: false, body: { message: 'hi' } }, { beforeSend }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UpstreamError);
    expect((failure as UpstreamError).kind).toBe('cancelled');
    expect((failure as UpstreamError).details.mayHaveHappened).toBe(false);
    expect(received).toBe(0);
    // A read still goes: a stopping server answers reads.
    await api.request({ method: 'GET', path: '/read', safe: true });
    expect(received).toBe(1);
    await api.close();
  });
});
