// Review 16: in remote mode the API's address is the service's (its operator's ENGAGE_BASE_URL),
// not the user's. A call whose API could not be reached was told "check ENGAGE_BASE_URL and the
// network, then try again", and a redirect "ENGAGE_BASE_URL may point to an old or wrong address":
// names a remote user cannot see or change. There, the answer says the service could not reach its
// API and that its operator fixes the address; a stdio server still names ENGAGE_BASE_URL.
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
const NOWHERE = 'http://127.0.0.1:9';

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: NOWHERE }, catalogs: CATALOGS, port: 0, writeLog: () => undefined });
});
afterAll(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
  await service?.close();
  await sandbox?.close();
});

describe('an API the service cannot reach', () => {
  it.each(['v1', 'v2-modern'] as const)('remote mode (%s client): the service could not reach its API; its operator, not ENGAGE_BASE_URL', async (kind) => {
    const client = makeClient({ kind });
    open.push(client);
    const url = new URL('/mcp/contact', service.url);
    const requestInit = { headers: { authorization: `Bearer ${sandbox.keys.full}` } };
    await client.connect(kind === 'v1' ? new V1HttpTransport(url, { requestInit }) : new V2HttpTransport(url, { requestInit }));
    const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Could not connect to the API at http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)\. Nothing was sent/);
    expect(textOf(result)).toMatch(/this service's operator/);
    expect(textOf(result)).not.toMatch(/ENGAGE_BASE_URL/);
  });

  it('a stdio server still names ENGAGE_BASE_URL', async () => {
    const server = await inProcess(DOMAINS.contact!, { baseUrl: NOWHERE, keys: sandbox.keys });
    try {
      expect(textOf(await server.call('contact.list'))).toMatch(/Nothing was sent; check ENGAGE_BASE_URL and the network, then try again\./);
    } finally {
      await server.close();
    }
  });
});
