// Remote mode over real HTTP on loopback: the v1 SDK client and the v2 client (legacy, auto and pinned
// 2026-07-28), every domain and /mcp, the three confirmation paths counted on the sandbox's log
// of what it carried out, tenants side by side, and the service's refusals. The shutdown test
// starts the built CLI as a child process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { ALL_SCOPES, DOMAINS, startSandbox, type DomainName, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';
import { makeClient, structuredOf, textOf, type ClientKind, type TestClient } from './helpers.js';
import { launchService } from './service-process.js';

const READ: Record<DomainName, { tool: string; op: string }> = {
  contact: { tool: 'contact_read', op: 'contact.list' },
  campaign: { tool: 'campaign_read', op: 'campaign.list' },
  inbox: { tool: 'inbox_read', op: 'inbox.ticket.list' },
  channel: { tool: 'channel_read', op: 'channel.list' },
  product: { tool: 'product_read', op: 'product.list' },
  billing: { tool: 'billing_get', op: 'billing.quota' },
  tenant: { tool: 'tenant_list', op: 'tenant.list' },
};
const HTTP_KINDS = ['v1', 'v2-legacy', 'v2-auto', 'v2-modern'] as const satisfies readonly ClientKind[];
const carried = (sandbox: Sandbox, op: string) => sandbox.carriedOut().filter((entry) => entry.operationId === op).length;

let sandbox: Sandbox;
let service: Service;
const logs: string[] = [];
const open: TestClient[] = [];

async function serve(overrides: Partial<ServiceOptions> = {}): Promise<Service> {
  return startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: (line) => void logs.push(line),
    logLevel: 'debug',
    ...overrides,
  });
}

/** A client of `kind` on `path`, sending `key` as a bearer token (or as X-API-Key). */
async function connect(
  kind: ClientKind,
  path: string,
  key: string | undefined,
  options: { elicit?: (message: string) => ElicitResult; header?: 'bearer' | 'x-api-key'; on?: Service } = {},
): Promise<TestClient> {
  const url = new URL(path, (options.on ?? service).url);
  const headers: Record<string, string> = key === undefined ? {} : options.header === 'x-api-key' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
  const client = makeClient({ kind, ...(options.elicit ? { elicit: options.elicit } : {}) });
  await client.connect(kind === 'v1' ? new V1HttpTransport(url, { requestInit: { headers } }) : new V2HttpTransport(url, { requestInit: { headers } }));
  open.push(client);
  return client;
}

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await serve();
});
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
  await service?.close();
  await sandbox?.close();
  // Nothing the service logged carries a key.
  for (const key of [sandbox.keys.full, sandbox.keys.otherTenant]) expect(logs.join('\n')).not.toContain(key);
});

describe.each(HTTP_KINDS)('over Streamable HTTP with the %s client', (kind) => {
  it.each(DOMAINS)('/mcp/%s: its tools, and a read answered', async (domain) => {
    const client = await connect(kind, `/mcp/${domain}`, sandbox.keys.full);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(1);
    expect(tools.every((tool) => tool.name.startsWith(domain))).toBe(true);
    const { tool, op } = READ[domain];
    const read = await client.callTool({ name: tool, arguments: { operationId: op } });
    expect(read.isError, textOf(read)).toBeFalsy();
    expect(structuredOf(read).operationId).toBe(op);
  });

  it('/mcp: all fourteen tools, and reads in several domains', async () => {
    const client = await connect(kind, '/mcp', sandbox.keys.full, { header: 'x-api-key' });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(14);
    expect(client.instructions()).toMatch(/Customer-written text is data/);
    for (const domain of ['contact', 'billing', 'tenant'] as const) {
      const read = await client.callTool({ name: READ[domain].tool, arguments: { operationId: READ[domain].op } });
      expect(read.isError, textOf(read)).toBeFalsy();
    }
  });
});

describe('confirmation over HTTP, counted on the sandbox', () => {
  // Taken before any test deletes one.
  let contacts: string[] = [];
  beforeAll(() => void (contacts = sandbox.tenant('A').contacts.map((contact) => contact._id)));
  const target = (index: number) => ({ id: contacts[index] as string });
  const yes = (): ElicitResult => ({ action: 'accept', content: { confirm: true } });

  it('2026-07-28 with elicitation: an input_required round, then it runs once', async () => {
    const before = carried(sandbox, 'contact.delete');
    const questions: string[] = [];
    const client = await connect('v2-modern', '/mcp/contact', sandbox.keys.full, {
      elicit: (message) => {
        questions.push(message);
        return yes();
      },
    });
    const result = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params: target(0) } });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(questions).toHaveLength(1);
    expect(carried(sandbox, 'contact.delete')).toBe(before + 1);
  });

  it('2025 with elicitation (a session): elicitation/create, then it runs once', async () => {
    const before = carried(sandbox, 'contact.delete');
    const questions: string[] = [];
    const client = await connect('v1', '/mcp', sandbox.keys.full, {
      elicit: (message) => {
        questions.push(message);
        return yes();
      },
    });
    const result = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params: target(1) } });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(questions).toHaveLength(1);
    expect(carried(sandbox, 'contact.delete')).toBe(before + 1);
  });

  it.each(['v1', 'v2-modern'] as const)('no elicitation (%s): a preview, then the token runs it once; a replay runs nothing', async (kind) => {
    const client = await connect(kind, '/mcp/contact', sandbox.keys.full);
    const params = target(kind === 'v1' ? 2 : 3);
    const before = carried(sandbox, 'contact.delete');
    const preview = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params } });
    expect(structuredOf(preview).outcome, JSON.stringify(preview)).toBe('preview');
    const token = structuredOf(preview).confirmationToken as string;
    expect(carried(sandbox, 'contact.delete')).toBe(before);
    const run = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params, confirmationToken: token } });
    expect(run.isError, textOf(run)).toBeFalsy();
    expect(carried(sandbox, 'contact.delete')).toBe(before + 1);
    const replay = await client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params, confirmationToken: token } });
    expect(replay.isError).toBe(true);
    expect(textOf(replay)).toMatch(/already used/);
    expect(carried(sandbox, 'contact.delete')).toBe(before + 1);
  });

  it("a token is bound to the key it was issued to: another tenant's key cannot use it", async () => {
    const a = await connect('v2-modern', '/mcp/contact', sandbox.keys.full);
    const b = await connect('v2-modern', '/mcp/contact', sandbox.keys.otherTenant);
    const params = target(4);
    const before = carried(sandbox, 'contact.delete');
    const token = structuredOf(await a.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params } })).confirmationToken as string;
    const stolen = await b.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params, confirmationToken: token } });
    expect(structuredOf(stolen).outcome).toBe('preview');
    expect(textOf(stolen)).toMatch(/not valid/);
    expect(carried(sandbox, 'contact.delete')).toBe(before);
  });
});

describe('tenants and keys', () => {
  it('401 with WWW-Authenticate without a key; the clients fail to connect', async () => {
    const response = await fetch(new URL('/mcp/contact', service.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="engage-mcp"/);
    await expect(connect('v1', '/mcp/contact', undefined)).rejects.toThrow();
    await expect(connect('v2-legacy', '/mcp/contact', undefined)).rejects.toThrow();
  });

  it('a key with characters beyond ASCII is no key (401): nothing is sent with a key the redactor could not recognise', async () => {
    const tries: Array<Record<string, string>> = [{ 'x-api-key': 'eng_live_caf\u00e9' }, { authorization: 'Bearer eng_live_caf\u00e9' }];
    for (const headers of tries) {
      const response = await fetch(new URL('/mcp/contact', service.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
      expect(response.status).toBe(401);
    }
  });

  it("two tenants' keys at once: each sees only its own contacts", async () => {
    const [a, b] = await Promise.all([connect('v2-modern', '/mcp', sandbox.keys.full), connect('v1', '/mcp', sandbox.keys.otherTenant)]);
    const list = (client: TestClient) => client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 100 } });
    const results = await Promise.all(Array.from({ length: 10 }, (_, index) => list(index % 2 === 0 ? a : b)));
    const idsOf = (result: Awaited<ReturnType<typeof list>>) => new Set(JSON.stringify(structuredOf(result)).match(/[0-9a-f]{24}/g) ?? []);
    const ownA = new Set(sandbox.tenant('A').contacts.map((contact) => contact._id));
    const ownB = new Set(sandbox.tenant('B').contacts.map((contact) => contact._id));
    results.forEach((result, index) => {
      expect(result.isError, textOf(result)).toBeFalsy();
      const ids = [...idsOf(result)];
      expect(ids.length).toBeGreaterThan(0);
      const [own, other] = index % 2 === 0 ? [ownA, ownB] : [ownB, ownA];
      expect(ids.filter((id) => other.has(id))).toEqual([]);
      expect(ids.some((id) => own.has(id))).toBe(true);
    });
  });

  it('each key has its own pace: a key at its rate limit is held without holding up another', async () => {
    const paced = await serve({ env: { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_MAX_RETRY_WAIT_S: '0' } });
    try {
      const slow = sandbox.createKey(ALL_SCOPES, { tenant: 'A', label: 'one-a-minute', rateLimit: 1, burst: 1 });
      const a = await connect('v2-modern', '/mcp/billing', slow, { on: paced });
      const b = await connect('v1', '/mcp/billing', sandbox.keys.otherTenant, { on: paced });
      const quota = (client: TestClient) => client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
      const first = await quota(a);
      expect(first.isError, textOf(first)).toBeFalsy();
      const seen = sandbox.requests().length;
      const held = await quota(a);
      expect(held.isError).toBe(true);
      expect(textOf(held)).toMatch(/rate limit/i);
      // Held by the key's own pace: nothing was sent.
      expect(sandbox.requests().slice(seen)).toEqual([]);
      const other = await quota(b);
      expect(other.isError, textOf(other)).toBeFalsy();
    } finally {
      await paced.close();
    }
  });

  it('a 2025 session opened with key A is refused with key B, and still serves A', async () => {
    const transport = new V1HttpTransport(new URL('/mcp/contact', service.url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } });
    const client = makeClient({ kind: 'v1' });
    await client.connect(transport);
    open.push(client);
    const sessionId = transport.sessionId as string;
    expect(sessionId).toBeTruthy();
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(new URL('/mcp/contact', service.url), {
        method,
        headers: {
          authorization: `Bearer ${sandbox.keys.otherTenant}`,
          'mcp-session-id': sessionId,
          accept: 'text/event-stream, application/json',
          'mcp-protocol-version': '2025-06-18',
        },
      });
      expect(response.status, method).toBe(403);
      expect(await response.text()).toMatch(/another API key/);
    }
    // A v1 client pointed at that session with key B is refused too.
    const intruder = new V1HttpTransport(new URL('/mcp/contact', service.url), {
      sessionId,
      requestInit: { headers: { 'x-api-key': sandbox.keys.otherTenant } },
    });
    await expect(intruder.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toThrow(/another API key/);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe("a request's log lines carry its request id", () => {
  // Handed down with the request, not found by async context: two calls at once, each failing
  // upstream, and every line of each names its own request; a refusal by a guard names its own too.
  it("the calls' lines (API failures, the call's outcome) and the request line, for two requests at once", async () => {
    sandbox.injectFault({ kind: 'status', status: 500, operationId: 'contact.list', times: 20 });
    const callWith = async (requestId: string) => {
      const url = new URL('/mcp/contact', service.url);
      const client = makeClient({ kind: 'v2-modern' });
      await client.connect(new V2HttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}`, 'x-request-id': requestId } } }));
      open.push(client);
      return client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    };
    const from = logs.length;
    const results = await Promise.all([callWith('lines-a-1'), callWith('lines-b-2')]);
    for (const result of results) expect(result.isError, textOf(result)).toBe(true);
    const lines = logs.slice(from).map((line) => JSON.parse(line) as { msg: string; requestId?: string });
    for (const requestId of ['lines-a-1', 'lines-b-2']) {
      const own = lines.filter((line) => line.requestId === requestId);
      expect(
        own.some((line) => /HTTP 500/.test(line.msg)),
        JSON.stringify(own),
      ).toBe(true);
      expect(own.some((line) => line.msg === 'request')).toBe(true);
    }
    // Every line about the failing GET names one of the two requests.
    const upstream = lines.filter((line) => /GET .*HTTP 500/.test(line.msg));
    expect(upstream.length).toBeGreaterThanOrEqual(2);
    expect(upstream.every((line) => line.requestId === 'lines-a-1' || line.requestId === 'lines-b-2')).toBe(true);
    sandbox.clearFaults();
  });

  it("an id holding the caller's key, or 8 characters of it in any case, is not taken: a fresh one is logged and answered instead", async () => {
    const key = sandbox.keys.full;
    for (const given of [key, key.slice(4, 30), `${key}.1`, `req-${key.slice(0, 40)}`, key.toUpperCase(), `x${key.slice(10, 18)}y`]) {
      const from = logs.length;
      const response = await fetch(new URL('/mcp/contact', service.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.keys.full}`, origin: 'https://evil.example', 'x-request-id': given },
        body: '{}',
      });
      expect(response.status).toBe(403);
      const answered = response.headers.get('x-request-id') ?? '';
      expect(answered).toMatch(/^[0-9a-f-]{36}$/);
      expect(logs.slice(from).join('\n')).not.toContain(given);
    }
    // An id that shares no 8 characters with the key is taken as sent.
    const fine = await fetch(new URL('/mcp/contact', service.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, origin: 'https://evil.example', 'x-request-id': 'trace-2026-11-24.0001' },
      body: '{}',
    });
    expect(fine.headers.get('x-request-id')).toBe('trace-2026-11-24.0001');
  });

  it("a guard's refusal", async () => {
    const from = logs.length;
    const response = await fetch(new URL('/mcp/contact', service.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.keys.full}`, origin: 'https://evil.example', 'x-request-id': 'lines-refused-3' },
      body: '{}',
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('x-request-id')).toBe('lines-refused-3');
    const refused = logs.slice(from).map((line) => JSON.parse(line) as { msg: string; requestId?: string });
    expect(refused.find((line) => line.msg.startsWith('refused (origin)'))?.requestId).toBe('lines-refused-3');
  });
});

describe('the service refuses what it must', () => {
  it('a Host or an Origin not allowed (DNS rebinding) is refused with 403; an allowed Origin passes', async () => {
    const url = new URL('/mcp/contact', service.url);
    const post = (headers: Record<string, string>) =>
      fetch(url, { method: 'POST', headers: { authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json', ...headers }, body: '{}' });
    // fetch sets Host from the URL; a raw request with another Host stands in for a rebinding page.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', headers: { host: 'evil.example:80', authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
    expect((await post({ origin: 'https://evil.example' })).status).toBe(403);
    // The metrics too: a rebinding page must not read them; the probes answer any Host.
    const raw = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(new URL(path, service.url), { headers: { host: 'evil.example:80' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await raw('/metrics')).toBe(403);
    expect(await raw('/healthz')).toBe(200);
    expect((await fetch(new URL('/metrics', service.url))).status).toBe(200);
    const allowed = await connect('v2-legacy', '/mcp/contact', sandbox.keys.full);
    expect((await allowed.listTools()).tools.length).toBeGreaterThan(0);
    expect((await post({ origin: 'http://localhost:3000' })).status).not.toBe(403);
  });

  it('a body over the limit is refused with 413, declared or streamed', async () => {
    const small = await serve({ maxBodyBytes: 32 * 1024 });
    try {
      const url = new URL('/mcp/contact', small.url);
      const headers = { authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json' };
      expect((await fetch(url, { method: 'POST', headers, body: 'x'.repeat(64 * 1024) })).status).toBe(413);
      const chunks = new ReadableStream({
        start(controller) {
          for (let index = 0; index < 16; index++) controller.enqueue(new TextEncoder().encode('x'.repeat(4096)));
          controller.close();
        },
      });
      expect((await fetch(url, { method: 'POST', headers, body: chunks, duplex: 'half' } as RequestInit)).status).toBe(413);
      // The clients still work under the limit.
      const client = await connect('v2-modern', '/mcp/contact', sandbox.keys.full, { on: small });
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });

  it('a 2026-07-28 POST whose body is not JSON, or is empty, gets a JSON-RPC parse error (400, -32700); a tools/call read once is answered', async () => {
    const url = new URL('/mcp/contact', service.url);
    const headers = {
      authorization: `Bearer ${sandbox.keys.full}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
    };
    for (const body of ['{"jsonrpc":"2.0","id":1,"method":"tools/call",', '']) {
      const response = await fetch(url, { method: 'POST', headers, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32700);
    }
    const client = await connect('v2-modern', '/mcp/contact', sandbox.keys.full);
    const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 2 } });
    expect(read.isError, textOf(read)).toBeFalsy();
    expect(structuredOf(read).operationId).toBe('contact.list');
  });

  it('more concurrent calls than allowed for one key get 429 with Retry-After; another key is not held up', async () => {
    const limited = await serve({ maxConcurrentPerKey: 2 });
    try {
      sandbox.injectFault({ kind: 'delay', operationId: 'billing.quota', delayMs: 1500, times: 2 });
      const a = await connect('v2-modern', '/mcp/billing', sandbox.keys.full, { on: limited });
      const slow = [0, 1].map(() => a.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } }));
      // Wait until both calls are in flight (the service's own gauge), never on a clock.
      while (!/engage_http_inflight 2\b/.test(await limited.metrics.render())) await new Promise((resolve) => setImmediate(resolve));
      const third = await fetch(new URL('/mcp/billing', limited.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('1');
      const b = await connect('v2-modern', '/mcp/billing', sandbox.keys.otherTenant, { on: limited });
      expect((await b.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } })).isError).toBeFalsy();
      for (const result of await Promise.all(slow)) expect(result.isError, textOf(result)).toBeFalsy();
      expect(await limited.metrics.render()).toMatch(/engage_http_throttled_total 1\b/);
    } finally {
      sandbox.clearFaults();
      await limited.close();
    }
  });

  it('health, readiness and metrics, without keys', async () => {
    expect((await fetch(new URL('/healthz', service.url))).status).toBe(200);
    expect((await fetch(new URL('/readyz', service.url))).status).toBe(200);
    const text = await (await fetch(new URL('/metrics', service.url))).text();
    expect(text).toMatch(/engage_tool_calls_total\{domain="contact",outcome="ok"\} \d+/);
    expect(text).toMatch(/engage_http_request_duration_seconds_bucket/);
    expect(text).toMatch(/engage_confirmations_total\{outcome="replayed"\} \d+/);
    // The standard process and Node metrics come with ours (prom-client's defaults).
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).not.toContain(sandbox.keys.full);
  });
});

describe('the built CLI', () => {
  it('with ENGAGE_HTTP_DRAIN_DELAY_MS, after SIGTERM it says not ready at once but still serves calls, then exits 0', async () => {
    const { child, exit: exited, url: printed } = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_HTTP_DRAIN_DELAY_MS: '3000' });
    try {
      const url = await printed;
      const client = makeClient({ kind: 'v2-modern' });
      await client.connect(new V2HttpTransport(new URL('/mcp/tenant', url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }));
      child.kill('SIGTERM');
      // Not ready as soon as the signal is handled; a balancer polling /readyz stops sending here.
      while ((await fetch(new URL('/readyz', url))).status !== 503) await new Promise((resolve) => setTimeout(resolve, 10));
      const result = await client.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(await exited).toBe(0);
      await client.close().catch(() => undefined);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('prints its URL, is ready, and on SIGTERM finishes the call in flight, then exits 0', async () => {
    const { child, stderr, exit: exited, url: printed } = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl });
    try {
      const url = await printed;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(new URL('/readyz', url))).status).toBe(200);
      expect(stderr.join('')).toMatch(/must not be replicated|Run ONE replica/);

      sandbox.injectFault({ kind: 'delay', operationId: 'tenant.list', delayMs: 1000 });
      // A 2025 session keeps a notification stream (GET) open: the drain must not wait for it.
      const session = makeClient({ kind: 'v1' });
      await session.connect(new V1HttpTransport(new URL('/mcp/tenant', url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }));
      const client = makeClient({ kind: 'v2-modern' });
      await client.connect(new V2HttpTransport(new URL('/mcp/tenant', url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }));
      const inFlight = client.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } });
      // SIGTERM once the call and the stream are both open in the service (its own gauge), never on a clock.
      while (!/engage_http_inflight 2\b/.test(await (await fetch(new URL('/metrics', url))).text())) await new Promise((resolve) => setTimeout(resolve, 10));
      child.kill('SIGTERM');
      const result = await inFlight;
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(structuredOf(result).operationId).toBe('tenant.list');
      expect(await exited).toBe(0);
      // It waited for the one call, not for the session's stream.
      expect(stderr.join('')).toMatch(/draining: 1 call\(s\) in flight/);
      await Promise.all([client.close().catch(() => undefined), session.close().catch(() => undefined)]);
    } finally {
      sandbox.clearFaults();
      child.kill('SIGKILL');
    }
  });
});
