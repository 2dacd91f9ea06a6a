// What telemetry is to the rest of the server: the span of one tool call, and the telemetry that
// opens them. Types only (telemetry.ts, telemetry-spans.ts and telemetry-sdk.ts share them).
import type { MetricReader } from '@opentelemetry/sdk-metrics';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { CallTelemetry, Reply } from '../call/context.js';
import type { OperationInfo } from '../model/manifest.js';
import type { AttemptTracer } from '../upstream/tracing.js';

/** What a tool call's span is opened with: the tool, and what its request says about where it came from. */
export interface ToolCallStart {
  tool: string;
  /** The tool's operations: a look-up's path is recorded as the template of the one it matches. */
  operations: readonly OperationInfo[];
  /** The JSON-RPC id of the tools/call request. */
  requestId: string | number;
  /** The request's params._meta: traceparent and tracestate name the caller's span. */
  meta: Record<string, unknown> | undefined;
  /**
   * Whether a text holds a form of the caller's key (its redactor would change it). What the
   * caller chose (its request id, its trace context) is kept out of the trace when it does.
   */
  holdsKey?: (text: string) => boolean;
  /** stdio is `pipe`, Streamable HTTP `tcp`. */
  transport: 'pipe' | 'tcp';
  /**
   * Streamable HTTP only: the TCP peer the request came from (client.address, client.port) and the
   * 2025 session it is part of (mcp.session.id). On the span only: per client, too many for a metric's attributes.
   */
  connection?: { clientAddress?: string; clientPort?: number; sessionId?: string };
  protocolVersion?: string;
}

/** One tool call's span, open while the call runs. */
export interface ToolCallSpan extends CallTelemetry {
  traceAttempt: AttemptTracer;
  /** Ends the span with the reply (undefined: the handler threw, which the SDK answers as a tool error) and records the call's duration. */
  end(reply: Reply | undefined): void;
}

export interface Telemetry {
  startToolCall(start: ToolCallStart): ToolCallSpan;
  /** Exports what is pending, then stops. */
  shutdown(): Promise<void>;
}

export interface TelemetryOptions {
  /** service.name, unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
  /** Tests: spans go here (exported as each ends) instead of OTLP/HTTP. */
  spanExporter?: SpanExporter;
  /** Tests: metrics are read here instead of exported periodically over OTLP/HTTP. */
  metricReader?: MetricReader;
}
