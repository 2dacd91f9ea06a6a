// Which OpenTelemetry signals the environment turns on: each signal by its own settings, so a
// setting that names one signal (or switches one off) never starts the other towards an endpoint
// nobody named.
import { describe, expect, it } from 'vitest';
import { telemetrySignals } from '../shared/src/mcp/telemetry.js';

const on = (env: NodeJS.ProcessEnv) => {
  const { traces, metrics } = telemetrySignals(env);
  return { traces, metrics };
};

describe('telemetrySignals', () => {
  it('is off when nothing is set, and when the SDK is disabled', () => {
    expect(on({})).toEqual({ traces: false, metrics: false });
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'TRUE' })).toEqual({ traces: false, metrics: false });
  });

  it('the common endpoint, or an exporter named otlp, turns both on; none switches one off', () => {
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({ traces: true, metrics: true });
    expect(on({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ traces: true, metrics: true });
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_METRICS_EXPORTER: 'none' })).toEqual({ traces: true, metrics: false });
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toEqual({ traces: false, metrics: true });
  });

  it('OTEL_TRACES_EXPORTER=none alone starts nothing (it used to send metrics to the default endpoint)', () => {
    expect(on({ OTEL_TRACES_EXPORTER: 'none' })).toEqual({ traces: false, metrics: false });
  });

  it("a signal's own endpoint turns on that signal only", () => {
    expect(on({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:4318/v1/metrics' })).toEqual({ traces: false, metrics: true });
    expect(on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toEqual({ traces: true, metrics: false });
  });

  it('an exporter other than otlp or none is reported and taken as none, and starts nothing on its own', () => {
    const signals = telemetrySignals({ OTEL_TRACES_EXPORTER: 'console' });
    expect(signals).toEqual({ traces: false, metrics: false, problems: [expect.stringContaining('OTEL_TRACES_EXPORTER=console is not supported')] });
  });
});
