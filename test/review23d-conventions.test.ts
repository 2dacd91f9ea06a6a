// Review 23d, the tool call's span and duration against OpenTelemetry's MCP semantic conventions
// (docs/gen-ai/mcp.md, development status; moved to open-telemetry/semantic-conventions-genai in
// May 2026). `error.type`: "When CallToolResult is returned with isError set to true, this
// attribute SHOULD be set to tool_error", and the JSON-RPC error code only when the answer is a
// JSON-RPC error. A tool handler that throws is answered by the SDK with an isError result (the
// error's message as its text), yet its span and its point in mcp.server.operation.duration said
// `_OTHER`, so a dashboard of tool errors missed it. It is `tool_error` now.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import { ATTR_MCP_METHOD_NAME, METRIC_MCP_SERVER_OPERATION_DURATION } from '@opentelemetry/semantic-conventions/incubating';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@engage-mcp/shared';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess } from './helpers.js';
import { inMemoryTelemetry } from './telemetry-helpers.js';

const SERVER = 1; // SpanKind.SERVER

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

describe('a tool call whose handler throws', () => {
  it('is answered isError by the SDK, and its span and duration say error.type=tool_error', async () => {
    const { telemetry, spans, reader } = await inMemoryTelemetry('review23d');
    const quiet = createLogger('review23d', 'error', []);
    // A failure inside the server itself: the log a failed call is noted in throws (a full disk, say).
    const log = {
      ...quiet,
      warn: (message: string) => {
        if (message.includes('failed')) throw new Error('the log cannot be written');
      },
    };
    const server = await inProcess(DOMAINS.campaign!, sandbox, { server: { telemetry, log } });
    let result: CallToolResult;
    try {
      result = await server.call('campaign.progress', { id: 'no-such-campaign-7f3a' });
    } finally {
      await server.close();
    }
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('the log cannot be written');
    const root = spans.getFinishedSpans().find((span) => span.kind === SERVER) as ReadableSpan;
    expect(root.name).toBe('tools/call campaign_read');
    expect(root.attributes[ATTR_ERROR_TYPE]).toBe('tool_error');
    expect(root.status.code).toBe(2); // SpanStatusCode.ERROR
    const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
    const metric = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).find((one) => one.descriptor.name === METRIC_MCP_SERVER_OPERATION_DURATION);
    expect(metric?.dataPoints.map((point) => point.attributes)).toEqual([
      expect.objectContaining({ [ATTR_MCP_METHOD_NAME]: 'tools/call', [ATTR_ERROR_TYPE]: 'tool_error' }),
    ]);
    await telemetry.shutdown();
  });
});
