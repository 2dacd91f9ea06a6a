// Review 24a: a remote tool call's span and the connection it came on. OpenTelemetry's MCP
// conventions (semantic-conventions-genai, model/mcp/spans.yaml, the mcp.server span) recommend
// `client.address` and `client.port` ("If applicable"; the port "When client.address is set") and
// `mcp.session.id` ("When the MCP request or notification is part of a session"). A remote call's
// span had none of them, so a trace could not say which client or which 2025 session a call came
// from. Now: the TCP peer as Node sees it (X-Forwarded-For is the caller's to write and is not
// trusted here), and the session's id for a 2025 session; a stdio call's span has none of them,
// and no span holds the key.
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint } from '@engage-mcp/shared';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, makeClient, textOf, type TestClient } from './helpers.js';
import { inMemoryTelemetry, toolCallSpans, withTelemetryService } from './telemetry-helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

const QUOTA = { name: 'billing_get', arguments: { operationId: 'billing.quota' } };

/** One billing.quota through `client` connected over `transport`, answered without error; the client closed after. */
async function quotaOver(client: TestClient, transport: unknown): Promise<void> {
  await client.connect(transport);
  try {
    const result = await client.callTool(QUOTA);
    expect(result.isError, textOf(result)).toBeFalsy();
  } finally {
    await client.close();
  }
}

function expectNoKey(recorded: unknown, key: string): void {
  const text = JSON.stringify(recorded);
  for (const secret of [key, keyFingerprint(key), keyFingerprint(key).slice(0, 16)]) expect(text).not.toContain(secret);
}

describe('a remote call’s span names its connection', () => {
  it('a 2025 session: client.address and client.port of the TCP peer, mcp.session.id of the session; X-Forwarded-For is not believed', async () => {
    await withTelemetryService(sandbox, 'review24a', async (service, spans, peerPorts) => {
      const headers = { authorization: `Bearer ${sandbox.keys.full}`, 'x-forwarded-for': '203.0.113.9' };
      const transport = new V1HttpTransport(new URL('/mcp/billing', service.url), { requestInit: { headers } });
      await quotaOver(makeClient({ kind: 'v1' }), transport);
      const [span] = toolCallSpans(spans);
      expect(span?.attributes).toMatchObject({ 'client.address': '127.0.0.1', 'mcp.session.id': transport.sessionId });
      expect(peerPorts).toContain(span?.attributes['client.port']);
      expectNoKey(
        toolCallSpans(spans).map((one) => one.attributes),
        sandbox.keys.full,
      );
    });
  });

  it('2026-07-28 (no sessions): client.address and client.port, no mcp.session.id', async () => {
    await withTelemetryService(sandbox, 'review24a', async (service, spans, peerPorts) => {
      const url = new URL('/mcp/billing', service.url);
      await quotaOver(
        makeClient({ kind: 'v2-modern' }),
        new ModernHttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }),
      );
      const [span] = toolCallSpans(spans);
      expect(span?.attributes['client.address']).toBe('127.0.0.1');
      expect(peerPorts).toContain(span?.attributes['client.port']);
      expect(span?.attributes).not.toHaveProperty('mcp.session.id');
      expectNoKey(
        toolCallSpans(spans).map((one) => one.attributes),
        sandbox.keys.full,
      );
    });
  });

  it('over stdio: none of them', async () => {
    const { telemetry, spans } = await inMemoryTelemetry('review24a');
    const server = await inProcess(DOMAINS.billing!, sandbox, { server: { telemetry } });
    try {
      const result = await server.client.callTool(QUOTA);
      expect(result.isError, textOf(result)).toBeFalsy();
    } finally {
      await server.close();
    }
    const [span] = toolCallSpans(spans);
    expect(span?.attributes['network.transport']).toBe('pipe');
    for (const name of ['client.address', 'client.port', 'mcp.session.id']) expect(span?.attributes).not.toHaveProperty(name);
    await telemetry.shutdown();
  });
});
