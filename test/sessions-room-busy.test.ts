// When every 2025 session place is taken, the key holding the most gives up its least recently used
// session to a key holding fewer (review35-tenants). That session could be in the middle of a call:
// a write waiting on the person's yes was ended by another tenant's new session, and its call never
// answered (review36-remote). Now a session with a call in flight is never given up for another
// key: the least recently used idle one is, and with none idle the new session is refused (503).
import { describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { countCarriedOut, makeClient, structuredOf, textOf, type TestClient, until } from './helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const SEND = 'channel.whatsapp.send';
const file = servicePerFile({ maxSessions: 2, maxSessionsPerKey: 2 });

async function session(key: string, elicit?: (message: string) => Promise<ElicitResult>): Promise<TestClient & { end(): Promise<void> }> {
  const client = makeClient({ kind: 'v1', elicit });
  const transport = new V1HttpTransport(new URL('/mcp/channel', file.service.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  file.closeAfter(client);
  return Object.assign(client, { end: () => transport.terminateSession() });
}

const read = (client: TestClient) => client.callTool({ name: 'channel_read', arguments: { operationId: 'channel.list' } });

describe('a 2025 session given up for another key', () => {
  it('is never one with a call in flight: the idle one goes, and the write waiting on its yes is answered', async () => {
    // Tenant B has used this service before: the API accepted its key.
    const earlier = await session(file.sandbox.keys.otherTenant);
    expect((await read(earlier)).isError).toBeFalsy();
    await earlier.end();
    // Tenant A: a session whose write waits on the person's yes (its least recently used), and an idle one.
    let answer: ((result: ElicitResult) => void) | undefined;
    const busy = await session(file.sandbox.keys.full, () => new Promise<ElicitResult>((resolve) => (answer = resolve)));
    expect((await read(busy)).isError).toBeFalsy();
    const carried = countCarriedOut(file.sandbox, SEND);
    let result: Awaited<ReturnType<TestClient['callTool']>> | undefined;
    let failed: unknown;
    busy.callTool({ name: 'channel_action', arguments: { operationId: SEND, params: { msisdn: '081234567890', message: 'waiting on a yes' } } }).then(
      (done) => (result = done),
      (error) => (failed = error),
    );
    await until('the person asked', () => answer !== undefined);
    const idle = await session(file.sandbox.keys.full);
    expect((await read(idle)).isError).toBeFalsy();
    // Tenant B's new session needs a place: A holds both.
    const tenantB = await session(file.sandbox.keys.otherTenant);
    expect((await read(tenantB)).isError).toBeFalsy();
    answer?.({ action: 'accept', content: { confirm: true } });
    await until('the write answered', () => result !== undefined || failed !== undefined);
    expect(failed).toBeUndefined();
    expect(structuredOf(result as never).outcome, textOf(result as never)).toBe('done');
    expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);
    await expect(read(idle)).rejects.toThrow(/404|Session not found/);
  });
});
