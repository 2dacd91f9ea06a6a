// A key the API refuses (401) is told what to do in the mode it runs in: a stdio server reads
// ENGAGE_API_KEY; remote mode reads no key of its own, only the one each request brings.
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as V2HttpTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, makeClient, textOf, type TestClient } from './helpers.js';

let sandbox: Sandbox;
let service: Service;
const open: TestClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => undefined });
});
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
  await service?.close();
  await sandbox?.close();
});

describe('a revoked key', () => {
  it.each(['v1', 'v2-modern'] as const)('in remote mode (%s client): send a new key with each request; ENGAGE_API_KEY is not named', async (kind) => {
    const client = makeClient({ kind });
    open.push(client);
    const url = new URL('/mcp/contact', service.url);
    const requestInit = { headers: { authorization: `Bearer ${sandbox.keys.revoked}` } };
    await client.connect(kind === 'v1' ? new V1HttpTransport(url, { requestInit }) : new V2HttpTransport(url, { requestInit }));
    const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /The API refused the key \(HTTP 401\): it is invalid, revoked or expired\. Retrying will not help: tell the user, who can create a new key in the tenant console/,
    );
    expect(textOf(result)).toMatch(/send it with each request to this service \(Authorization: Bearer <key> or X-API-Key\)/);
    expect(textOf(result)).not.toMatch(/ENGAGE_API_KEY/);
  });

  it('in a stdio server: set ENGAGE_API_KEY', async () => {
    const server = await inProcess(DOMAINS.contact!, sandbox, { env: { ENGAGE_API_KEY: sandbox.keys.revoked } });
    try {
      const result = await server.call('contact.list');
      expect(textOf(result)).toMatch(
        /invalid, revoked or expired\. Retrying will not help: tell the user, who can create a new key in the tenant console under API key settings and set ENGAGE_API_KEY/,
      );
    } finally {
      await server.close();
    }
  });
});
