// Fair remote mode: what one tenant (or a crowd of made-up keys) does must not hold up, lock out or
// make forget another tenant, and what the service says about a call that overran its deadline or
// met a stalled Redis must be true. Over real HTTP on loopback against the sandbox, counted on the
// sandbox's own log of what it carried out; never timed on the clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';
import { WriteJournal } from '../shared/src/call/journal.js';
import { makeClient, textOf, type ClientKind, type TestClient } from './helpers.js';

let sandbox: Sandbox;
const logs: string[] = [];
const open: TestClient[] = [];
const services: Service[] = [];
const carried = (op: string) => sandbox.carriedOut().filter((entry) => entry.operationId === op).length;

async function serve(overrides: Partial<ServiceOptions> = {}, env: Record<string, string> = {}): Promise<Service> {
  const service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl, ...env },
    catalogs: CATALOGS,
    port: 0,
    writeLog: (line) => void logs.push(line),
    logLevel: 'debug',
    ...overrides,
  });
  services.push(service);
  return service;
}

async function connect(kind: ClientKind, on: Service, path: string, key: string): Promise<TestClient> {
  const url = new URL(path, on.url);
  const requestInit = { headers: { authorization: `Bearer ${key}` } };
  const client = makeClient({ kind });
  await client.connect(kind === 'v1' ? new V1HttpTransport(url, { requestInit }) : new V2HttpTransport(url, { requestInit }));
  open.push(client);
  return client;
}

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
  await Promise.allSettled(services.map((service) => service.close()));
  await sandbox?.close();
  for (const key of [sandbox.keys.full, sandbox.keys.otherTenant]) expect(logs.join('\n')).not.toContain(key);
});

describe('the request deadline', () => {
  it('starts with ENGAGE_HTTP_REQUEST_TIMEOUT_MS at the bottom of its range (1000)', async () => {
    const short = await serve({ requestTimeoutMs: 1_000 });
    expect((await fetch(new URL('/readyz', short.url))).status).toBe(200);
  });

  it('a deadline that fires while a write runs does not say the call was cancelled: the write is carried out', async () => {
    const short = await serve({ requestTimeoutMs: 1_000 }, { ENGAGE_CONFIRM: 'none' });
    sandbox.injectFault({ kind: 'delay', operationId: 'channel.whatsapp.send', delayMs: 2_500 });
    const before = carried('channel.whatsapp.send');
    const client = await connect('v2-modern', short, '/mcp/channel', sandbox.keys.full);
    const params = { msisdn: '081234567890', message: 'deadline' };
    const error = await client.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', params } }).then(
      (result) => new Error(`answered: ${textOf(result)}`),
      (thrown: unknown) => thrown as Error,
    );
    expect(error.message).toMatch(/"error":"deadline"/);
    expect(error.message).not.toMatch(/cancelled/);
    expect(error.message).toMatch(/may still be carried out/);
    // The write ran to its end after the 504.
    while (carried('channel.whatsapp.send') === before) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(carried('channel.whatsapp.send')).toBe(before + 1);
  });
});

describe('the write journal, per key', () => {
  it("one tenant's 20,000 ungated writes do not push another tenant's sent write out", () => {
    const journal = new WriteJournal();
    const reply = { ticketId: 't1', message: 'Your order shipped' };
    journal.attempt('tenant-b', 'inbox.reply', reply, 'in-flight');
    journal.attempt('tenant-b', 'inbox.reply', reply, 'done');
    for (let index = 0; index < 20_001; index++) {
      journal.attempt('tenant-a', 'contact.create', { name: `c${index}` }, 'in-flight');
      journal.attempt('tenant-a', 'contact.create', { name: `c${index}` }, 'done');
    }
    expect(journal.lastSent('tenant-b', 'inbox.reply', reply)?.outcome).toBe('done');
    // The flooding tenant remembers its own latest writes.
    expect(journal.lastSent('tenant-a', 'contact.create', { name: 'c20000' })?.outcome).toBe('done');
  });
});

describe("the key's concurrency limit counts calls", () => {
  it('a 2025 JSON-RPC batch of several tools/call is refused whole: nothing is sent to the API', async () => {
    const limited = await serve({ maxConcurrentPerKey: 2 });
    const url = new URL('/mcp/billing', limited.url);
    const transport = new V1HttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } });
    const client = makeClient({ kind: 'v1' });
    await client.connect(transport);
    open.push(client);
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'billing_get', arguments: { operationId: 'billing.quota' } } });
    const seen = sandbox.requests().length;
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${sandbox.keys.full}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId as string,
        'mcp-protocol-version': '2025-03-26',
      },
      body: JSON.stringify(Array.from({ length: 10 }, (_, index) => call(100 + index))),
    });
    const text = await response.text();
    expect(response.status, text).toBe(400);
    expect(text).toMatch(/one request per POST/);
    expect(sandbox.requests().slice(seen)).toEqual([]);
    // The session still serves one call at a time.
    expect((await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } })).isError).toBeFalsy();
  });
});

describe('upstream fairness between tenants', () => {
  it("one tenant's flood against a slow API does not hold up another tenant's read", async () => {
    const busy = await serve({ maxConcurrentPerKey: 100 });
    const flood = 20;
    const a = await connect('v2-modern', busy, '/mcp/contact', sandbox.keys.full);
    const b = await connect('v2-modern', busy, '/mcp/billing', sandbox.keys.otherTenant);
    // Both keys are known to the API (accepted) before the flood: their first answers said so.
    expect((await a.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } })).isError).toBeFalsy();
    expect((await b.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } })).isError).toBeFalsy();
    const listedBefore = sandbox.requests().filter((request) => request.operationId === 'contact.list').length;
    sandbox.injectFault({ kind: 'delay', operationId: 'contact.list', delayMs: 2_000, times: flood });
    try {
      let finished = 0;
      const floodCalls = Array.from({ length: flood }, () =>
        a.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } }).finally(() => void finished++),
      );
      // Every call of the flood is in the service and the slow API holds the first of them.
      const listed = () => sandbox.requests().filter((request) => request.operationId === 'contact.list').length - listedBefore;
      while (!new RegExp(`engage_http_inflight ${flood}\\b`).test(await busy.metrics.render()) || listed() < 4) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const quota = await b.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
      expect(quota.isError, textOf(quota)).toBeFalsy();
      // Answered while not one call of the flood has come back: it did not queue behind them.
      expect(finished).toBe(0);
      // The flood itself is served, four at a time.
      for (const result of await Promise.all(floodCalls)) expect(result.isError, textOf(result)).toBeFalsy();
    } finally {
      sandbox.clearFaults();
    }
  });
});

describe('2025 sessions', () => {
  const sessionsOpen = async (on: Service) => Number(/^engage_sessions_open (\d+)/m.exec(await on.metrics.render())?.[1]);
  const quota = (client: TestClient) => client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });

  it('made-up keys cannot lock 2025 clients out, and one key cannot hold every session', async () => {
    const bounded = await serve({ maxSessions: 2, maxSessionsPerKey: 2, maxUnacceptedSessions: 3 });
    // Ten made-up keys open ten sessions: the API never accepted them, so they push out only each other.
    for (let index = 0; index < 10; index++) await connect('v1', bounded, '/mcp/billing', `made-up-key-${index}`);
    expect(await sessionsOpen(bounded)).toBe(3);
    // A real key still opens a session, and its first call makes it an accepted key.
    const real = await connect('v1', bounded, '/mcp/billing', sandbox.keys.full);
    expect((await quota(real)).isError).toBeFalsy();
    // The key at its own bound gives up its least recently used session, not another tenant's place.
    const more = [await connect('v1', bounded, '/mcp/billing', sandbox.keys.full), await connect('v1', bounded, '/mcp/billing', sandbox.keys.full)];
    for (const client of more) expect((await quota(client)).isError).toBeFalsy();
    const other = await connect('v1', bounded, '/mcp/billing', sandbox.keys.otherTenant);
    expect((await quota(other)).isError).toBeFalsy();
    expect(await sessionsOpen(bounded)).toBeLessThanOrEqual(2 + 3);
  });
});
