// Telemetry kept in memory for tests (spans in an exporter, metrics read when asked), and a remote
// service with it whose billing.quota call a test re-sends with its JSON edited: how the telemetry
// reviews play a hostile caller's request.
import { StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { MetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { createLogger, startTelemetry, type Telemetry } from '@engage-mcp/shared';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService } from '../packages/http/src/service.js';
import { makeClient } from './helpers.js';

export interface Sent {
  status: number;
  text: string;
}

/** Reads the metrics when asked (collect), like a scrape. */
export class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** Telemetry whose spans stay in memory and whose metrics `reader` collects. */
export async function inMemoryTelemetry(name: string): Promise<{ telemetry: Telemetry; spans: InMemorySpanExporter; reader: TestReader }> {
  const spans = new InMemorySpanExporter();
  const reader = new TestReader();
  const log = createLogger(name, 'error', []);
  const telemetry = (await startTelemetry({}, log, { serviceName: 'engage-mcp-test', spanExporter: spans, metricReader: reader })) as Telemetry;
  return { telemetry, spans, reader };
}

/**
 * `send` posts the billing.quota call again, as the SDK's client shaped it, after `change` has
 * edited the request's JSON; the spans of the first call are cleared before `run`.
 */
export async function withEditedCalls(
  sandbox: Sandbox,
  name: string,
  run: (send: (change: (body: any) => void) => Promise<Sent>, spans: InMemorySpanExporter) => Promise<void>,
): Promise<void> {
  const { telemetry, spans } = await inMemoryTelemetry(name);
  const service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {}, telemetry });
  const client = makeClient({ kind: 'v2-modern' });
  let template: { input: Parameters<typeof fetch>[0]; init: RequestInit } | undefined;
  const noting: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string' && init.body.includes('"tools/call"')) template = { input, init };
    return fetch(input, init);
  };
  try {
    const url = new URL('/mcp/billing', service.url);
    await client.connect(new ModernHttpTransport(url, { fetch: noting, requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }));
    await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
    spans.reset();
    const send = async (change: (body: any) => void): Promise<Sent> => {
      const body = JSON.parse(template?.init.body as string);
      change(body);
      const response = await fetch(template?.input as string, { ...template?.init, body: JSON.stringify(body) });
      return { status: response.status, text: await response.text() };
    };
    await run(send, spans);
  } finally {
    await client.close();
    await service.close();
  }
}

/** The finished server spans (one per tool call) an exporter holds. */
export function toolCallSpans(spans: InMemorySpanExporter): ReturnType<InMemorySpanExporter['getFinishedSpans']> {
  return spans.getFinishedSpans().filter((span) => span.kind === 1); // SpanKind.SERVER
}

/**
 * A remote service with in-memory telemetry; `peerPorts` holds the client port of every TCP
 * connection the service accepted, as Node saw it (socket.remotePort).
 */
export async function withTelemetryService(
  sandbox: Sandbox,
  name: string,
  run: (service: Awaited<ReturnType<typeof startService>>, spans: InMemorySpanExporter, peerPorts: number[]) => Promise<void>,
): Promise<void> {
  const { telemetry, spans } = await inMemoryTelemetry(name);
  const service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {}, telemetry });
  const peerPorts: number[] = [];
  service.server.on('connection', (socket) => peerPorts.push(socket.remotePort as number));
  try {
    await run(service, spans, peerPorts);
  } finally {
    await service.close();
  }
}
