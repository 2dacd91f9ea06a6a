// OpenTelemetry, off by default and free when off: nothing of it (not even @opentelemetry/api) is
// loaded unless the environment names an OTLP exporter. Then telemetry-sdk.ts (a bundle of its
// own beside the server's, loaded here on demand) sets up the SDK, and every tool call gets a
// span (telemetry-spans.ts).
import type { Logger } from '../safe/log.js';
import type { Telemetry, TelemetryOptions } from './telemetry-types.js';

export type { Telemetry, TelemetryOptions, ToolCallSpan, ToolCallStart } from './telemetry-types.js';

/**
 * Which signals the environment asks for. Each signal is on when its exporter is OTLP (the
 * default, unless set to none) and something names where it goes: the common endpoint, its own
 * endpoint, or an exporter set to otlp by name (the default endpoint). So `OTEL_TRACES_EXPORTER=none`
 * alone starts nothing, and a metrics endpoint alone sends metrics only. Only OTLP is offered: a
 * console exporter would write into stdout, the protocol.
 */
export function telemetrySignals(env: NodeJS.ProcessEnv): { traces: boolean; metrics: boolean; problems: string[] } {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { traces: false, metrics: false, problems: [] };
  const problems: string[] = [];
  const exporter = (name: 'OTEL_TRACES_EXPORTER' | 'OTEL_METRICS_EXPORTER') => {
    const given = env[name]?.trim().toLowerCase();
    if (given && given !== 'otlp' && given !== 'none') problems.push(`${name}=${given} is not supported (only otlp or none); it is taken as none.`);
    return { otlp: (given || 'otlp') === 'otlp', named: given === 'otlp' };
  };
  const traces = exporter('OTEL_TRACES_EXPORTER');
  const metrics = exporter('OTEL_METRICS_EXPORTER');
  const otlpNamed = traces.named || metrics.named || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const on = {
    traces: traces.otlp && (otlpNamed || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)),
    metrics: metrics.otlp && (otlpNamed || Boolean(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)),
  };
  return { ...on, problems: [...problems, ...grpcProblems(env, on)] };
}

/**
 * OTEL_EXPORTER_OTLP_PROTOCOL=grpc (or a signal's own) is the standard setting for a collector's gRPC
 * receiver; only OTLP/HTTP is sent, so with an endpoint on the gRPC port every export failed with
 * an HTTP parse error and nothing said why. Said at start, for the signals that are on.
 */
function grpcProblems(env: NodeJS.ProcessEnv, on: { traces: boolean; metrics: boolean }): string[] {
  const settings = [
    ['OTEL_EXPORTER_OTLP_PROTOCOL', on.traces || on.metrics],
    ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', on.traces],
    ['OTEL_EXPORTER_OTLP_METRICS_PROTOCOL', on.metrics],
  ] as const;
  return settings
    .filter(([name, used]) => used && env[name]?.trim().toLowerCase() === 'grpc')
    .map(
      ([name]) =>
        `${name}=grpc is not supported (only OTLP/HTTP, JSON, is sent): point the endpoint at the collector's OTLP/HTTP receiver (port 4318 by default), not its gRPC one (4317).`,
    );
}

/** The SDK and its exporters when the environment asks for them (or a test passes its own), else undefined: telemetry stays off. */
export async function startTelemetry(env: NodeJS.ProcessEnv, log: Logger, options: TelemetryOptions): Promise<Telemetry | undefined> {
  const injected = options.spanExporter !== undefined || options.metricReader !== undefined;
  const signals = injected ? { traces: options.spanExporter !== undefined, metrics: options.metricReader !== undefined, problems: [] } : telemetrySignals(env);
  for (const problem of signals.problems) log.warn(`telemetry: ${problem}`);
  if (!signals.traces && !signals.metrics) return undefined;
  const { openTelemetry } = await import('./telemetry-sdk.js');
  const telemetry = openTelemetry(env, log, options, signals);
  log.info(`telemetry on: ${[signals.traces ? 'traces' : '', signals.metrics ? 'metrics' : ''].filter(Boolean).join(' and ')} over OTLP`);
  return telemetry;
}
