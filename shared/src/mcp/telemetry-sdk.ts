// The OpenTelemetry SDK, loaded only when telemetry is on (telemetry.ts imports this on demand; the
// build makes it a bundle of its own). Our own providers, not the global ones: a host process or
// a test may have its own, and ours must not change what they record. The OTLP/HTTP exporters read
// the standard OTEL_EXPORTER_OTLP_* settings themselves (endpoint, headers, timeout).
import { DiagLogLevel, diag } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Logger } from '../safe/log.js';
import type { Telemetry, TelemetryOptions } from './telemetry-types.js';
import { DURATION_BUCKETS, toolCallSpans } from './telemetry-spans.js';

const SCOPE = { name: 'engage-mcp', version: '0.1.0' };
const DEFAULT_METRIC_INTERVAL_MS = 60_000;
/**
 * How long a stop waits for the last spans and metrics to be exported. A collector that is down or
 * hung would otherwise hold the exit for the SDK's own export timeouts (up to 30 s each, the
 * request retried meanwhile), after the calls had drained: what is still unsent then is dropped.
 */
export const SHUTDOWN_WAIT_MS = 2_000;

export function openTelemetry(env: NodeJS.ProcessEnv, log: Logger, options: TelemetryOptions, signals: { traces: boolean; metrics: boolean }): Telemetry {
  // The SDK's own complaints (an export that failed, a setting it cannot read) go to our log on
  // stderr, made safe there, and first rid of the collector's credentials (settingsRedactor).
  const safe = settingsRedactor(env);
  const warn = (message: unknown) => log.warn(safe(String(message)));
  diag.setLogger({ error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
  const resource = resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': SCOPE.version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const tracerProvider = signals.traces ? new TracerProvider({ resource, spanProcessors: [spanProcessor(env, options)] }) : undefined;
  const reader = signals.metrics ? (options.metricReader ?? periodicReader(env)) : undefined;
  const meterProvider = reader ? new MeterProvider({ resource, readers: [reader] }) : undefined;
  const duration = meterProvider?.getMeter(SCOPE.name, SCOPE.version).createHistogram('mcp.server.operation.duration', {
    unit: 's',
    description: 'MCP request duration as observed on the receiver from the time it was received until the result is sent.',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const tracer = tracerProvider?.getTracer(SCOPE.name, SCOPE.version);
  return {
    startToolCall: toolCallSpans(tracer, duration, new W3CTraceContextPropagator()),
    async shutdown() {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
        timer.unref();
      });
      await Promise.race([Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]), waited]);
      clearTimeout(timer);
    },
  };
}

/**
 * What the SDK says of its settings quotes them as given: an endpoint it cannot parse (`Could not
 * parse environment-provided export URL: '…'`, a typo in the port, or a password with a `/`, `?` or
 * `#` not percent-encoded) with the user:password of the collector in it, or its key in the query
 * (`?api-key=…`, as some ingest services take it). Our log redacts the Engage key, not these: an
 * endpoint setting's user information (to its last `@`, whatever it holds), any URL's user
 * information and query go, and so does any value of OTEL_EXPORTER_OTLP_HEADERS or a signal's own
 * headers (a collector's API key).
 */
function settingsRedactor(env: NodeJS.ProcessEnv): (text: string) => string {
  const headerValues = Object.entries(env)
    .filter(([name]) => /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$/.test(name))
    .flatMap(([, value]) => (value ?? '').split(','))
    .map((pair) => pair.slice(pair.indexOf('=') + 1).trim())
    .flatMap((value) => [value, decoded(value)])
    .filter((value) => value.length >= 4);
  const endpoints = endpointsWithUserInfo(env);
  return (text) => {
    let safe = text;
    for (const [given, shown] of endpoints) safe = safe.split(given).join(shown);
    safe = withoutQueries(withoutUserInfo(safe));
    for (const value of headerValues) safe = safe.split(value).join('[redacted]');
    return safe;
  };
}

/**
 * Each endpoint setting with user information, as given and as it may be shown: its user
 * information is all between `://` and the last `@`. A password with a `/`, `?` or `#` not
 * percent-encoded makes the URL unparseable (so quoted by the SDK), and a scan of URLs in a text
 * ends a URL's user information at the first of them: it found no `@` before it.
 */
function endpointsWithUserInfo(env: NodeJS.ProcessEnv): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(env)) {
    if (!/^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?ENDPOINT$/.test(name) || !value) continue;
    for (const given of new Set([value, value.trim()])) {
      const start = given.indexOf('://') + 3;
      const at = given.lastIndexOf('@');
      if (start >= 3 && at >= start) pairs.push([given, `${given.slice(0, start)}[redacted]${given.slice(at)}`]);
    }
  }
  return pairs;
}

/** Where a URL's user information ends: the first character that cannot be part of it. */
const END_OF_USER_INFO = /[\s/?#'"]/g;

/**
 * The text with the user information of every URL in it (`scheme://user:password@`, up to the last
 * `@` before a blank, `/`, `?`, `#` or quote) replaced, in one pass. A regular expression did it
 * by backtracking over each run of letters after each possible start, in time that grew with the
 * square of the run: the body of a collector's error answer (up to 4 MB, quoted in the SDK's
 * warning) held the event loop, every call of the server with it, for hours.
 */
function withoutUserInfo(text: string): string {
  let safe = '';
  let copied = 0;
  let from = text.indexOf('://');
  while (from >= 0) {
    const start = from + 3;
    END_OF_USER_INFO.lastIndex = start;
    const end = END_OF_USER_INFO.exec(text)?.index ?? text.length;
    const at = text.slice(start, end).lastIndexOf('@');
    if (at >= 0) {
      safe += `${text.slice(copied, start)}[redacted]`;
      copied = start + at;
    }
    // What the scan passed holds no '/': the next '://' starts at its last character or after.
    from = text.indexOf('://', end - 1);
  }
  return safe + text.slice(copied);
}

/** Where a URL ends in a text: a blank, a quote or an angle bracket. */
const END_OF_URL = /[\s'"<>]/g;

/**
 * The text with the query of every URL in it (from its `?` to its `#` or its end) replaced, in one
 * pass: each URL is searched once, so a long text (a collector's error answer) costs its length.
 */
function withoutQueries(text: string): string {
  let safe = '';
  let copied = 0;
  let from = text.indexOf('://');
  while (from >= 0) {
    const start = from + 3;
    END_OF_URL.lastIndex = start;
    const end = END_OF_URL.exec(text)?.index ?? text.length;
    const rest = text.slice(start, end);
    const question = rest.indexOf('?');
    if (question >= 0) {
      const hash = rest.indexOf('#', question);
      safe += `${text.slice(copied, start + question + 1)}[redacted]`;
      copied = hash >= 0 ? start + hash : end;
    }
    from = text.indexOf('://', end);
  }
  return safe + text.slice(copied);
}

function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function spanProcessor(env: NodeJS.ProcessEnv, options: TelemetryOptions) {
  // A test's exporter gets each span as it ends; OTLP gets batches, every OTEL_BSP_SCHEDULE_DELAY ms (5 s by default).
  if (options.spanExporter) return new SimpleSpanProcessor({ exporter: options.spanExporter });
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  return new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...(Number.isInteger(delay) && delay > 0 ? { scheduledDelayMillis: delay } : {}) });
}

function periodicReader(env: NodeJS.ProcessEnv): MetricReader {
  const given = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  const interval = Number.isInteger(given) && given > 0 ? given : DEFAULT_METRIC_INTERVAL_MS;
  // The SDK refuses an export timeout longer than the interval.
  return new PeriodicExportingMetricReader({
    exporter: new OTLPMetricExporter(),
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(interval, 30_000),
  });
}
