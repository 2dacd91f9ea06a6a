// Review 43, telemetry and OTEL_EXPORTER_OTLP_PROTOCOL=grpc, the standard setting for a collector's
// gRPC receiver (4317). The servers send OTLP/HTTP (JSON) only and read the setting nowhere: with it
// and an endpoint on the gRPC port, every export failed with an HTTP parse error, and nothing said
// the setting was not followed. It is now reported at start, as an unsupported exporter is.
import { describe, expect, it } from 'vitest';
import { telemetrySignals } from '../shared/src/mcp/telemetry.js';

const ENDPOINT = 'http://127.0.0.1:4317';

describe('OTEL_EXPORTER_OTLP_PROTOCOL=grpc', () => {
  it('the common setting is reported when a signal is on; the signals stay on', () => {
    const signals = telemetrySignals({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: ' GRPC ' });
    expect(signals).toEqual({
      traces: true,
      metrics: true,
      problems: [expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported')],
    });
    expect(signals.problems[0]).toContain('4318');
  });

  it("a signal's own setting is reported when that signal is on, not otherwise", () => {
    const tracesOnly = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ENDPOINT}/v1/traces` };
    expect(telemetrySignals({ ...tracesOnly, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }).problems).toEqual([
      expect.stringContaining('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc is not supported'),
    ]);
    expect(telemetrySignals({ ...tracesOnly, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc' }).problems).toEqual([]);
  });

  it('says nothing when telemetry is off, or for the protocols it sends', () => {
    expect(telemetrySignals({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).problems).toEqual([]);
    expect(telemetrySignals({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).problems).toEqual([]);
    expect(telemetrySignals({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).problems).toEqual([]);
  });
});
