// OpenTelemetry, off by default and free when off: nothing of it (not even @opentelemetry/api) is
// loaded unless the environment names an OTLP exporter. Then telemetry-sdk.ts (a bundle of its
// own beside the server's, loaded here on demand) sets up the SDK, and every tool call gets a
// span (telemetry-spans.ts).
import type { Logger } from '../safe/log.js';
import type { Telemetry, TelemetryOptions } from './telemetry-types.js';

export type { Telemetry, TelemetryOptions, ToolCallSpan, ToolCallStart } from './telemetry-types.js';

/** Which signals the environment asks for. Only OTLP is offered: a console exporter would write into stdout, the protocol. */
export function telemetrySignals(env: NodeJS.ProcessEnv): { traces: boolean; metrics: boolean; problems: string[] } {
  const configured = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER);
  if (!configured || env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { traces: false, metrics: false, problems: [] };
  const problems: string[] = [];
  const wants = (name: string, value: string | undefined) => {
    const chosen = (value ?? 'otlp').trim().toLowerCase();
    if (chosen !== 'otlp' && chosen !== 'none') problems.push(`${name}=${chosen} is not supported (only otlp or none); it is taken as none.`);
    return chosen === 'otlp';
  };
  return { traces: wants('OTEL_TRACES_EXPORTER', env.OTEL_TRACES_EXPORTER), metrics: wants('OTEL_METRICS_EXPORTER', env.OTEL_METRICS_EXPORTER), problems };
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
