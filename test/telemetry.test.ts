// OpenTelemetry: a confirmed campaign.send yields the span tree (the tool call, then one client span
// per API request) with the MCP and HTTP conventions' names and attributes, under the caller's
// traceparent, over stdio and in remote mode; a failed call is a tool_error; nothing secret or
// customer-written is in an attribute. Built servers: with telemetry off no OpenTelemetry module
// is loaded at all; with OTEL_EXPORTER_OTLP_ENDPOINT set, spans and metrics arrive over OTLP/HTTP.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_MCP_METHOD_NAME,
  ATTR_URL_TEMPLATE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  METRIC_MCP_SERVER_OPERATION_DURATION,
} from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFingerprint } from '@engage-mcp/shared';
import { serverEntry, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService } from '../packages/http/src/service.js';
import { DOMAINS, MODERN_REVISION, inProcess, makeClient, textOf } from './helpers.js';
import { inMemoryTelemetry as inMemoryTelemetryOf, type TestReader } from './telemetry-helpers.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const SERVER = 1; // SpanKind.SERVER
const CLIENT = 2; // SpanKind.CLIENT

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

const inMemoryTelemetry = () => inMemoryTelemetryOf('telemetry-test');

/** A draft campaign of tenant A with recipients (the sandbox has one: each test that sends has a sandbox of its own). */
function sendableCampaign(box: Sandbox): string {
  const found = box.tenant('A').campaigns.find((campaign) => campaign.status === 'draft' && campaign.totalRecipients > 0);
  if (!found) throw new Error('the sandbox has no draft campaign left');
  return found._id;
}

const sendRequest = (id: string) => ({
  name: 'campaign_action',
  arguments: { operationId: 'campaign.send', params: { id } },
  _meta: { traceparent, tracestate: 'rojo=00f067aa0ba902b7' },
});

/** The tree a confirmed campaign.send must give: the tool call under the caller's span, every API request under the tool call. */
function expectSendTree(finished: ReadableSpan[], key: string, campaignId: string, transport: 'pipe' | 'tcp'): void {
  const roots = finished.filter((span) => span.kind === SERVER);
  expect(roots.map((span) => span.name)).toEqual(['tools/call campaign_action']);
  const root = roots[0] as ReadableSpan;
  expect(root.spanContext().traceId).toBe(TRACE_ID);
  expect(root.parentSpanContext?.spanId).toBe(CALLER_SPAN);
  expect(root.attributes).toMatchObject({
    [ATTR_MCP_METHOD_NAME]: 'tools/call',
    [ATTR_GEN_AI_TOOL_NAME]: 'campaign_action',
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
    'network.transport': transport,
    'engage.operation.id': 'campaign.send',
    'engage.confirmation': 'elicitation',
    'engage.outcome': 'done',
  });
  expect(root.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
  const requests = finished.filter((span) => span.kind === CLIENT);
  expect(requests.length).toBeGreaterThanOrEqual(2); // the preview's look-ups, then the send
  for (const request of requests) {
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(request.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
  }
  const send = requests.find((span) => span.attributes[ATTR_HTTP_REQUEST_METHOD] === 'POST');
  expect(send?.name).toBe('POST /api/campaign/campaigns/{id}/send');
  expect(send?.attributes).toMatchObject({ [ATTR_URL_TEMPLATE]: '/api/campaign/campaigns/{id}/send', [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200 });
  const lookup = requests.find((span) => span.name === 'GET /api/campaign/campaigns');
  expect(lookup?.attributes).toMatchObject({ [ATTR_URL_TEMPLATE]: '/api/campaign/campaigns', [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200 });
  // Before the send was claimed, every look-up had ended: the send is the last request.
  expect(Math.max(...requests.map((span) => span.startTime[0] * 1e9 + span.startTime[1]))).toBe(send!.startTime[0] * 1e9 + send!.startTime[1]);
  expectNothingSecret(finished, key, campaignId);
}

/** Never the key, its fingerprint, a filled path (the ids in it) or anything the API said, in a name or an attribute. */
function expectNothingSecret(finished: ReadableSpan[], key: string, ...ids: string[]): void {
  const recorded = JSON.stringify(finished.map((span) => [span.name, span.attributes, span.status, span.events]));
  for (const secret of [key, keyFingerprint(key), keyFingerprint(key).slice(0, 16), ...ids]) expect(recorded).not.toContain(secret);
}

async function durationPoints(reader: TestReader): Promise<Array<{ attributes: Record<string, unknown>; count: number }>> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((one) => one.descriptor.name === METRIC_MCP_SERVER_OPERATION_DURATION);
  expect(metric?.descriptor.unit).toBe('s');
  return (metric?.dataPoints ?? []).map((point) => ({ attributes: point.attributes, count: (point.value as { count: number }).count }));
}

describe('telemetry over stdio (in process, an in-memory exporter)', () => {
  it('a confirmed campaign.send: the tool call span under the caller, a client span per API request, the duration', async () => {
    const { telemetry, spans, reader } = await inMemoryTelemetry();
    const server = await inProcess(DOMAINS.campaign!, sandbox, { elicit: () => ({ action: 'accept', content: { confirm: true } }), server: { telemetry } });
    const id = sendableCampaign(sandbox);
    try {
      const result = (await server.client.callTool(sendRequest(id) as never)) as CallToolResult;
      expect(result.isError, textOf(result)).toBeFalsy();
    } finally {
      await server.close();
    }
    expectSendTree(spans.getFinishedSpans(), sandbox.keys.full, id, 'pipe');
    const points = await durationPoints(reader);
    expect(points).toContainEqual({
      attributes: expect.objectContaining({
        [ATTR_MCP_METHOD_NAME]: 'tools/call',
        [ATTR_GEN_AI_TOOL_NAME]: 'campaign_action',
        'engage.operation.id': 'campaign.send',
      }),
      count: 1,
    });
    await telemetry.shutdown();
  });

  it('a failed call is a tool_error, its API request carries the status; a call without traceparent starts a trace', async () => {
    const { telemetry, spans, reader } = await inMemoryTelemetry();
    const server = await inProcess(DOMAINS.campaign!, sandbox, { server: { telemetry } });
    try {
      const missing = await server.call('campaign.progress', { id: 'no-such-campaign-7f3a' });
      expect(missing.isError).toBe(true);
    } finally {
      await server.close();
    }
    const finished = spans.getFinishedSpans();
    const root = finished.find((span) => span.kind === SERVER) as ReadableSpan;
    expect(root.name).toBe('tools/call campaign_read');
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({ [ATTR_ERROR_TYPE]: 'tool_error', 'engage.operation.id': 'campaign.progress', 'engage.outcome': 'failed' });
    expect(root.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(root.status.message).toBeUndefined();
    const request = finished.find((span) => span.kind === CLIENT) as ReadableSpan;
    expect(request.attributes).toMatchObject({
      [ATTR_URL_TEMPLATE]: '/api/campaign/campaigns/{id}/progress',
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: 404,
      [ATTR_ERROR_TYPE]: '404',
    });
    expectNothingSecret(finished, sandbox.keys.full, 'no-such-campaign-7f3a');
    expect(await durationPoints(reader)).toContainEqual({ attributes: expect.objectContaining({ [ATTR_ERROR_TYPE]: 'tool_error' }), count: 1 });
    await telemetry.shutdown();
  });
});

describe('a call whose arguments the tool refuses', () => {
  it('gets its span (tool_error, outcome invalid) and its point in the histogram, and the same answer as before', async () => {
    const { telemetry, spans, reader } = await inMemoryTelemetry();
    const server = await inProcess(DOMAINS.campaign!, sandbox, { server: { telemetry } });
    let unknown: CallToolResult;
    let tooMany: CallToolResult;
    try {
      unknown = (await server.client.callTool({
        name: 'campaign_read',
        arguments: { operationId: 'Campaign.List' },
        _meta: { traceparent },
      } as never)) as CallToolResult;
      tooMany = (await server.client.callTool({ name: 'campaign_read', arguments: { operationId: 'campaign.list', limit: 9999 } })) as CallToolResult;
    } finally {
      await server.close();
    }
    // What the model reads is the SDK's answer for refused arguments, word for word, with our reason.
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^Input validation error: Invalid arguments for tool campaign_read: .*campaign\.list/);
    expect(textOf(tooMany)).toMatch(/^Input validation error: Invalid arguments for tool campaign_read: .*limit/);
    const roots = spans.getFinishedSpans().filter((span) => span.kind === SERVER);
    expect(roots.map((span) => span.name)).toEqual(['tools/call campaign_read', 'tools/call campaign_read']);
    expect(roots[0]!.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    for (const root of roots) {
      expect(root.attributes).toMatchObject({ [ATTR_ERROR_TYPE]: 'tool_error', 'engage.outcome': 'invalid' });
      expect(root.attributes['engage.operation.id']).toBeUndefined();
    }
    expect(await durationPoints(reader)).toContainEqual({ attributes: expect.objectContaining({ [ATTR_ERROR_TYPE]: 'tool_error' }), count: 2 });
    await telemetry.shutdown();
  });
});

describe('telemetry in remote mode (startService, an in-memory exporter)', () => {
  it('a confirmed campaign.send over Streamable HTTP: the same tree, transport tcp', async () => {
    const { telemetry, spans } = await inMemoryTelemetry();
    const own = await startSandbox();
    const service = await startService({ env: { ENGAGE_BASE_URL: own.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {}, telemetry });
    const client = new Client({ name: 'telemetry-test', version: '0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { confirm: true } }));
    const headers = { authorization: `Bearer ${own.keys.full}` };
    const id = sendableCampaign(own);
    let finished: ReadableSpan[] = [];
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/campaign', service.url), { requestInit: { headers } }));
      const result = (await client.callTool(sendRequest(id))) as CallToolResult;
      expect(result.isError, textOf(result)).toBeFalsy();
      // Read before close(): the service's close stops the telemetry, and the in-memory exporter forgets.
      finished = spans.getFinishedSpans();
    } finally {
      await client.close();
      await service.close();
      await own.close();
    }
    expectSendTree(finished, own.keys.full, id, 'tcp');
    expect(finished.find((span) => span.kind === SERVER)?.attributes['network.protocol.name']).toBe('http');
  });
});

describe("the caller's trace context in each protocol era", () => {
  it.each(['v1', 'v2-modern'] as const)('%s: params._meta.traceparent is the parent of the tool call span', async (kind) => {
    const { telemetry, spans } = await inMemoryTelemetry();
    const service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {}, telemetry });
    const client = makeClient({ kind });
    let finished: ReadableSpan[] = [];
    try {
      const headers = { authorization: `Bearer ${sandbox.keys.full}` };
      const url = new URL('/mcp/billing', service.url);
      await client.connect(
        kind === 'v1' ? new StreamableHTTPClientTransport(url, { requestInit: { headers } }) : new ModernHttpTransport(url, { requestInit: { headers } }),
      );
      const read = await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' }, _meta: { traceparent } } as never);
      expect(read.isError, textOf(read)).toBeFalsy();
      finished = spans.getFinishedSpans();
    } finally {
      await client.close();
      await service.close();
    }
    const root = finished.find((span) => span.kind === SERVER) as ReadableSpan;
    expect(root.name).toBe('tools/call billing_get');
    expect(root.spanContext().traceId).toBe(TRACE_ID);
    expect(root.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(root.attributes['mcp.protocol.version']).toEqual(kind === 'v1' ? expect.stringMatching(/^2025-/) : MODERN_REVISION);
  });
});

// The built servers, as a host starts them, with a module hook that notes every file Node loads.
describe('telemetry in a built stdio server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engage-otel-'));
  const hooks = join(dir, 'hooks.mjs');
  const register = join(dir, 'register.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function load(url, context, next) { appendFileSync(log, url + '\\n'); return next(url, context); }
`,
  );
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: process.env.ENGAGE_TEST_LOADED } });\n`,
  );
  // The servers are CommonJS: the bin runs server.cjs through a vm.Script (its code cache), and
  // server.cjs require()s the rest. Those loads are noted here; ES module loads by the hook above.
  const commonJs = join(dir, 'note-require.cjs');
  writeFileSync(
    commonJs,
    `const { appendFileSync } = require('node:fs');
const { pathToFileURL } = require('node:url');
const Module = require('node:module');
const vm = require('node:vm');
const note = (file) => appendFileSync(process.env.ENGAGE_TEST_LOADED, pathToFileURL(file).href + '\\n');
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) { note(filename); return compile.apply(this, arguments); };
const Script = vm.Script;
vm.Script = class extends Script { constructor(code, options) { if (options && options.filename) note(options.filename); super(code, options); } };
`,
  );

  /** Starts the built campaign server, makes one read with a traceparent, stops it; returns the files it loaded (their text). */
  async function readWith(env: Record<string, string>, name: string, whileRunning?: () => Promise<void>): Promise<string[]> {
    const loaded = join(dir, `${name}.loaded`);
    writeFileSync(loaded, '');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', pathToFileURL(register).href, '--require', commonJs, serverEntry('campaign')],
      env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_TEST_LOADED: loaded, ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'telemetry-test', version: '0' });
    await client.connect(transport);
    try {
      const read = await client.callTool({ name: 'campaign_read', arguments: { operationId: 'campaign.list' }, _meta: { traceparent } });
      expect(read.isError, textOf(read as CallToolResult)).toBeFalsy();
      await whileRunning?.();
    } finally {
      await client.close();
    }
    const files = readFileSync(loaded, 'utf8')
      .split('\n')
      .filter((url) => url.startsWith('file:'));
    return files.map((url) => readFileSync(fileURLToPath(url), 'utf8'));
  }
  // A string of @opentelemetry/api (its global's name), and one of the SDK chunk (the histogram's name).
  const isApi = (text: string) => text.includes('opentelemetry.js.api.');
  const isSdk = (text: string) => text.includes('mcp.server.operation.duration');

  it('with telemetry off, no OpenTelemetry module is loaded, not even the API', async () => {
    const loaded = await readWith({}, 'off');
    expect(loaded.length).toBeGreaterThan(1); // the hook saw the server and its chunks
    expect(loaded.filter(isApi)).toEqual([]);
    expect(loaded.filter(isSdk)).toEqual([]);
  });

  describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
    let receiver: Server;
    const posts: Array<{ path: string; body: string }> = [];
    beforeAll(async () => {
      receiver = createHttpServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          posts.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

    it('the SDK chunk loads, and the spans and the duration arrive at the OTLP/HTTP receiver', async () => {
      const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '100' };
      const arrived = async () => {
        await expect
          .poll(() => posts.some((post) => post.path === '/v1/traces' && post.body.includes('tools/call campaign_read')), { timeout: 15_000 })
          .toBe(true);
        await expect
          .poll(() => posts.some((post) => post.path === '/v1/metrics' && post.body.includes('mcp.server.operation.duration')), { timeout: 15_000 })
          .toBe(true);
      };
      const loaded = await readWith(env, 'on', arrived);
      expect(loaded.filter(isSdk)).toHaveLength(1);
      const traces = posts.filter((post) => post.path === '/v1/traces').map((post) => JSON.parse(post.body));
      const exported = traces.flatMap((body) => body.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)));
      const root = exported.find((span: any) => span.name === 'tools/call campaign_read');
      expect(root.traceId).toBe(TRACE_ID);
      expect(root.parentSpanId).toBe(CALLER_SPAN);
      expect(exported.find((span: any) => span.name === 'GET /api/campaign/campaigns')?.parentSpanId).toBe(root.spanId);
      expect(JSON.stringify(traces)).toContain('"engage-mcp-campaign"'); // service.name
      const everything = posts.map((post) => post.body).join('\n');
      for (const secret of [sandbox.keys.full, keyFingerprint(sandbox.keys.full).slice(0, 16)]) expect(everything).not.toContain(secret);
    });
  });
});
