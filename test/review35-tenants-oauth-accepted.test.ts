// Review 35 (tenants): keys the API has not accepted yet (fairness.ts) share two upstream slots, in
// the order they came. A replica that had not seen a tenant's key (one just started, or another of
// the replicas) put it there too when it came with an OAuth access token, though a grant is made
// only for a key the API accepted at consent and ends when the API refuses it: anyone sending calls
// with made-up keys (each answered 401, slowly) then held that tenant's call back behind all of
// theirs, and its 2025 sessions could be pushed out by theirs. A key that comes with a grant's
// access token now counts as accepted.
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { makeClient, textOf, type TestClient } from './helpers.js';
import { modernClient } from './service-process.js';
import { signIn } from './oauth-helpers.js';

const MADE_UP = 'made-up-key-';
let sandbox: Sandbox;
let slowProxy: Server;
const services: Service[] = [];
const clients: Array<{ close(): Promise<void> }> = [];
const store = new MemoryOAuthStore();
const kek = randomBytes(32);

/** The sandbox, behind a proxy that answers made-up keys' requests (401) after 1.5 s: an API slow to refuse. */
async function startSlowProxy(target: URL): Promise<string> {
  slowProxy = createServer((req, res) => {
    const madeUp = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '').includes(MADE_UP);
    setTimeout(
      () => {
        const onward = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        req.pipe(onward);
      },
      madeUp ? 1_500 : 0,
    );
  });
  await new Promise<void>((resolve) => slowProxy.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(slowProxy.address() as AddressInfo).port}`;
}

async function replica(baseUrl: string, publicUrl?: string): Promise<Service> {
  const service = await startService({
    env: { ENGAGE_BASE_URL: baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    oauth: { kek, store, ...(publicUrl ? { publicUrl } : {}) },
  });
  services.push(service);
  return service;
}

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await Promise.allSettled(services.map((service) => service.close()));
  slowProxy?.closeAllConnections();
  await new Promise((resolve) => slowProxy?.close(resolve));
  await sandbox?.close();
});

describe('a tenant signed in with OAuth, on a replica that has not seen its key, while made-up keys queue', () => {
  it("is answered without waiting for the made-up keys' calls ahead of it", { timeout: 60_000 }, async () => {
    const baseUrl = await startSlowProxy(new URL(sandbox.baseUrl));
    const first = await replica(baseUrl);
    const tokens = await signIn(first.url, sandbox.keys.otherTenant, { resource: `${first.url}/mcp/contact`, scopes: ['contact.read'] });
    const other = await replica(baseUrl, first.url);
    // Twenty calls of made-up keys on the other replica, each refused after 1.5 s, two at a time.
    const attackers = await Promise.all(
      Array.from({ length: 10 }, (_, at) => modernClient(other.url, `${MADE_UP}${at}-0123456789abcdef`, { domain: 'contact' })),
    );
    clients.push(...attackers);
    let refused = 0;
    const flood = attackers.flatMap((client) =>
      [0, 1].map(async () => {
        const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
        expect(textOf(result as never)).toMatch(/HTTP 401/);
        refused++;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200)); // the flood is in the queue first
    const tenant: TestClient = makeClient({ kind: 'v2-modern' });
    clients.push(tenant);
    const requestInit = { headers: { authorization: `Bearer ${tokens.access}` } };
    await tenant.connect(new StreamableHTTPClientTransport(new URL('/mcp/contact', other.url), { requestInit }));
    const read = await tenant.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(read.isError, textOf(read)).toBeFalsy();
    const refusedBefore = refused;
    await Promise.all(flood);
    // Answered while most of the flood still waited (twenty calls, two slots: ten rounds of 1.5 s).
    expect(refusedBefore).toBeLessThanOrEqual(8);
  });
});
