// Our server-side protocol layer against the SDK's own client and constants.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS as SDK_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { SUPPORTED_PROTOCOL_VERSIONS, createServer, loadConfig, manifestOf } from '@engage-mcp/shared';
import { DOMAINS } from './helpers.js';

async function pair() {
  const domain = DOMAINS.tenant!;
  const engage = createServer(manifestOf(domain), async () => domain, loadConfig({ ENGAGE_API_KEY: 'eng_live_x', ENGAGE_BASE_URL: 'http://127.0.0.1:9' }, 'tenant', ['tenant.list', 'tenant.setting']));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await engage.server.connect(serverSide);
  return { engage, clientSide };
}

describe('protocol', () => {
  it('speaks the protocol versions the SDK speaks', () => {
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual(SDK_VERSIONS);
    expect(SUPPORTED_PROTOCOL_VERSIONS[0]).toBe(LATEST_PROTOCOL_VERSION);
  });

  it('initializes with the SDK client, answers ping, and says what it is', async () => {
    const { engage, clientSide } = await pair();
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(clientSide);
    expect(client.getServerVersion()).toMatchObject({ name: 'engage-mcp-tenant', version: '0.1.0' });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    await expect(client.ping()).resolves.toEqual({});
    await client.close();
    await engage.close();
  });

  it('answers an unknown version with its latest, and unknown methods and bad messages with JSON-RPC errors', async () => {
    const { engage, clientSide } = await pair();
    const received: Array<Record<string, any>> = [];
    clientSide.onmessage = (message) => void received.push(message as Record<string, any>);
    await clientSide.start();
    const send = (message: unknown) => clientSide.send(message as never);
    await send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'x', version: '0' } } });
    await send({ jsonrpc: '2.0', id: 2, method: 'resources/list' });
    await send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } });
    await send({ jsonrpc: '1.0', id: 4, method: 'ping' });
    await send({ jsonrpc: '2.0', id: 5, method: 'ping' });
    await expect.poll(() => received.length).toBe(5);
    const byId = Object.fromEntries(received.map((message) => [message.id, message]));
    expect(byId[1]!.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(byId[2]!.error.code).toBe(-32601);
    expect(byId[3]!.error.code).toBe(-32602);
    expect(byId[4]!.error.code).toBe(-32600);
    expect(byId[5]!.result).toEqual({});
    await engage.close();
  });
});
