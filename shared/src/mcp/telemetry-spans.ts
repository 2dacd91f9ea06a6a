// The spans and the duration of a tool call, named and attributed per OpenTelemetry's semantic
// conventions for MCP (the server span `tools/call {tool}`, mcp.method.name, gen_ai.tool.name,
// gen_ai.operation.name=execute_tool, error.type=tool_error, the mcp.server.operation.duration
// histogram, the parent from params._meta.traceparent) and for HTTP clients (one span per API
// attempt). Attributes are our own words only: tool names, catalog ids and templates, statuses.
// Never the key, its fingerprint, params, answers or a filled path (ids can be customer data).
import {
  ROOT_CONTEXT,
  defaultTextMapGetter,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { CallFacts } from '../call/context.js';
import type { OperationInfo } from '../model/manifest.js';
import { routeMatches } from '../model/paths.js';
import type { AttemptEnd, AttemptStart } from '../upstream/tracing.js';
import type { ToolCallSpan, ToolCallStart } from './telemetry-types.js';

/** The convention's advised buckets for mcp.server.operation.duration, in seconds. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/**
 * The longest traceparent or tracestate taken from a caller: a traceparent is 55 characters and
 * OpenTelemetry uses 512 of a tracestate, but keeps its whole text with every span of the trace.
 * A longer one (a remote caller's to send, up to the body's size) is ignored, not cut: a cut
 * string would keep the whole one alive.
 */
const MAX_TRACE_CONTEXT_LENGTH = 1024;
/** The longest JSON-RPC id recorded; a longer one (the caller's to choose) is left out, for the same reason, and so is one that holds the key. */
const MAX_REQUEST_ID_LENGTH = 128;

const TRACE_CONTEXT_FIELDS = ['traceparent', 'tracestate'] as const;

/**
 * The caller's W3C trace context from params._meta, as the propagator reads it: its own string
 * fields only, at sizes they have in earnest, and none that holds a form of the key. The trace
 * state is exported with every span of the call, so a key the caller put there (or in the trace
 * id, as hex) would reach the collector; without its traceparent the call starts a trace of its own.
 */
function traceContextOf(meta: Record<string, unknown>, holdsKey: ToolCallStart['holdsKey']): Record<string, string> {
  const carrier: Record<string, string> = {};
  for (const field of TRACE_CONTEXT_FIELDS) {
    const value = Object.hasOwn(meta, field) ? meta[field] : undefined;
    if (typeof value === 'string' && value.length <= MAX_TRACE_CONTEXT_LENGTH && !holdsKey?.(value)) carrier[field] = value;
  }
  return carrier;
}

const NO_ATTEMPT_SPAN = { end: () => undefined };

/** Opens each tool call's span (when traces are on) and records its duration (when metrics are on). */
export function toolCallSpans(tracer: Tracer | undefined, duration: Histogram | undefined, propagator: TextMapPropagator) {
  return (start: ToolCallStart): ToolCallSpan => {
    const began = performance.now();
    const common: Attributes = {
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': start.tool,
      'gen_ai.operation.name': 'execute_tool',
      'network.transport': start.transport,
      ...(start.transport === 'tcp' ? { 'network.protocol.name': 'http' } : {}),
      ...(start.protocolVersion ? { 'mcp.protocol.version': start.protocolVersion } : {}),
    };
    // The caller's span (W3C trace context in params._meta) is the parent; without one, a new trace.
    const parent = tracer && start.meta ? propagator.extract(ROOT_CONTEXT, traceContextOf(start.meta, start.holdsKey), defaultTextMapGetter) : ROOT_CONTEXT;
    const id = String(start.requestId);
    const recordedId = tracer && id.length <= MAX_REQUEST_ID_LENGTH && !start.holdsKey?.(id);
    const attributes = { ...common, ...(recordedId ? { 'jsonrpc.request.id': id } : {}), ...connectionAttributes(start) };
    const span = tracer?.startSpan(`tools/call ${start.tool}`, { kind: SpanKind.SERVER, attributes }, parent);
    const within = span ? trace.setSpan(parent, span) : parent;
    let facts: CallFacts | undefined;
    return {
      settled: (given) => void (facts = given),
      traceAttempt: (attempt) => (tracer ? attemptSpan(tracer, within, attempt, start.operations) : NO_ATTEMPT_SPAN),
      end(reply) {
        // A handler that threw is answered by the SDK as a tool error too (isError, the error's message).
        const errorType = reply === undefined || ('isError' in reply && reply.isError) ? 'tool_error' : undefined;
        const operation: Attributes = facts?.operationId ? { 'engage.operation.id': facts.operationId } : {};
        if (span) {
          span.setAttributes({ ...operation, ...outcomeAttributes(facts), ...(errorType ? { 'error.type': errorType } : {}) });
          // No description: a tool error's text may quote the API or a customer.
          if (errorType) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
        duration?.record((performance.now() - began) / 1000, { ...common, ...operation, ...(errorType ? { 'error.type': errorType } : {}) });
      },
    };
  };
}

/** The conventions' client.address, client.port and mcp.session.id of a Streamable HTTP call (never of stdio's). */
function connectionAttributes({ transport, connection }: ToolCallStart): Attributes {
  if (transport !== 'tcp' || !connection) return {};
  const { clientAddress, clientPort, sessionId } = connection;
  return {
    ...(clientAddress ? { 'client.address': clientAddress, ...(clientPort ? { 'client.port': clientPort } : {}) } : {}),
    ...(sessionId ? { 'mcp.session.id': sessionId } : {}),
  };
}

function outcomeAttributes(facts: CallFacts | undefined): Attributes {
  if (!facts) return {};
  return { 'engage.outcome': facts.outcome, ...(facts.confirmation ? { 'engage.confirmation': facts.confirmation } : {}) };
}

/** A client span for one attempt of an API request, named `{method} {url.template}`. */
function attemptSpan(tracer: Tracer, parent: Context, attempt: AttemptStart, operations: readonly OperationInfo[]) {
  const template = attempt.template ?? templateOf(attempt, operations);
  const { origin } = attempt;
  const attributes: Attributes = {
    'http.request.method': attempt.method,
    'server.address': origin.hostname,
    'server.port': origin.port ? Number(origin.port) : origin.protocol === 'https:' ? 443 : 80,
    ...(template ? { 'url.template': template } : {}),
    ...(attempt.resendCount > 0 ? { 'http.request.resend_count': attempt.resendCount } : {}),
  };
  const span = tracer.startSpan(template ? `${attempt.method} ${template}` : attempt.method, { kind: SpanKind.CLIENT, attributes }, parent);
  return {
    end(result: AttemptEnd) {
      if ('status' in result) span.setAttribute('http.response.status_code', result.status);
      const errorType = 'failure' in result ? result.failure : result.status >= 400 ? String(result.status) : undefined;
      if (errorType) {
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** A look-up's path as the template of the operation it is (the most literal match, as a router picks), if any. */
function templateOf(attempt: AttemptStart, operations: readonly OperationInfo[]): string | undefined {
  const path = attempt.path.split('?')[0] as string;
  const literals = (template: string) => template.split('/').filter((segment) => !segment.startsWith('{')).length;
  let best: string | undefined;
  for (const op of operations) {
    if (op.method !== attempt.method || !routeMatches(op, path)) continue;
    if (best === undefined || literals(op.path) > literals(best)) best = op.path;
  }
  return best;
}
