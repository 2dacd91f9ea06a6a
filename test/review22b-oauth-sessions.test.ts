// Review 22b: a 2025 session opened with an OAuth access token belongs to a key the API has
// accepted (the consent page checked it, and its calls went through), so made-up keys, which push
// out only each other's sessions, must not push it out. Before, such a session was bound by the
// grant's client id (`<fingerprint>:grant:<id>`), which the fairness's list of accepted keys (by
// fingerprint) never held: every OAuth session counted as a made-up key's, and a few initializes
// with invented keys closed them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { makeClient, textOf, type TestClient } from './helpers.js';
import { signIn } from './oauth-helpers.js';

let sandbox: Sandbox;
let service: Service;
const open: TestClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    maxUnacceptedSessions: 2,
    oauth: { kek: randomBytes(32), store: new MemoryOAuthStore() },
  });
});
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
  await service?.close();
  await sandbox?.close();
});

const list = (client: TestClient) => client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 1 } });

it("made-up keys' sessions do not push out a session opened with an OAuth access token", async () => {
  const { access } = await signIn(service.url, sandbox.keys.full, { resource: `${service.url}/mcp/contact`, scopes: ['contact.read'] });
  const signedIn = makeClient({ kind: 'v2-legacy' });
  await signedIn.connect(
    new StreamableHTTPClientTransport(new URL('/mcp/contact', service.url), { requestInit: { headers: { authorization: `Bearer ${access}` } } }),
  );
  open.push(signedIn);
  const first = await list(signedIn);
  expect(first.isError, textOf(first)).toBeFalsy();
  // A hostile client opens sessions with invented keys (an initialize sends nothing to the API).
  for (let index = 0; index < 3; index++) {
    const madeUp = makeClient({ kind: 'v1' });
    const requestInit = { headers: { authorization: `Bearer made-up-key-${index}-${randomBytes(6).toString('hex')}` } };
    await madeUp.connect(new V1HttpTransport(new URL('/mcp/contact', service.url), { requestInit }));
    open.push(madeUp);
  }
  const again = await list(signedIn);
  expect(again.isError, textOf(again)).toBeFalsy();
});

it("one tenant key cannot take every session by signing in several times: its grants' sessions count as that key's", async () => {
  const bounded = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    maxSessions: 3,
    maxSessionsPerKey: 2,
    oauth: { kek: randomBytes(32), store: new MemoryOAuthStore() },
  });
  try {
    const connect = async (bearer: string) => {
      const client = makeClient({ kind: 'v2-legacy' });
      const requestInit = { headers: { authorization: `Bearer ${bearer}` } };
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/contact', bounded.url), { requestInit }));
      open.push(client);
      const read = await list(client);
      expect(read.isError, textOf(read)).toBeFalsy();
      return client;
    };
    // The same key, signed in three times (three grants), opens two sessions through each.
    for (let grant = 0; grant < 3; grant++) {
      const { access } = await signIn(bounded.url, sandbox.keys.full, { resource: `${bounded.url}/mcp/contact`, scopes: ['contact.read'] });
      await connect(access);
      await connect(access);
    }
    // Another tenant still gets a session: the first key held at most its own two.
    await connect(sandbox.keys.otherTenant);
  } finally {
    await bounded.close();
  }
});
