// Review 35 (tenants): 2025 sessions of keys the API has accepted are bounded all together
// (ENGAGE_HTTP_MAX_SESSIONS) and per key (ENGAGE_HTTP_MAX_SESSIONS_PER_KEY). A tenant may have
// several keys, each with its own per-key bound: one tenant holding enough of them took every
// place, and every other tenant's 2025 client was refused (503) for as long as it kept them open.
// Now, when every place is taken, the key holding the most gives up its least recently used
// session to a key holding at least two fewer.
import { describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeClient, textOf, type TestClient } from './helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const file = servicePerFile({ maxSessions: 4, maxSessionsPerKey: 2 });

async function session(key: string): Promise<TestClient & { end(): Promise<void> }> {
  const client = makeClient({ kind: 'v1' });
  const requestInit = { headers: { authorization: `Bearer ${key}` } };
  const transport = new V1HttpTransport(new URL('/mcp/contact', file.service.url), { requestInit });
  await client.connect(transport);
  file.closeAfter(client);
  return Object.assign(client, { end: () => transport.terminateSession() });
}

const list = (client: TestClient) => client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });

describe("one tenant's two keys holding every 2025 session", () => {
  it('do not keep another tenant out: the key holding the most gives up its least recently used', async () => {
    // Tenant B has used this service before: the API accepted its key.
    const earlier = await session(file.sandbox.keys.otherTenant);
    expect((await list(earlier)).isError).toBeFalsy();
    await earlier.end();
    const tenantA = [file.sandbox.keys.full, file.sandbox.keys.full, file.sandbox.keys.readOnly, file.sandbox.keys.readOnly];
    const heldByA: TestClient[] = [];
    for (const key of tenantA) {
      const client = await session(key);
      const read = await list(client);
      expect(read.isError, textOf(read)).toBeFalsy();
      heldByA.push(client);
    }
    const tenantB = await session(file.sandbox.keys.otherTenant);
    const read = await list(tenantB);
    expect(read.isError, textOf(read)).toBeFalsy();
    // One of A's sessions was ended (the first: least recently used of the key that held the most).
    await expect(list(heldByA[0] as TestClient)).rejects.toThrow(/404|Session not found/);
    for (const client of heldByA.slice(1)) expect((await list(client)).isError).toBeFalsy();
  });
});
