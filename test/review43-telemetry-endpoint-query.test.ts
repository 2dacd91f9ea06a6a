// Review 43, telemetry and a collector whose key is in its endpoint's query (`?api-key=…`, as
// some ingest services take it). The SDK quotes an endpoint it cannot parse as it was given; our
// log redacted a URL's user:password and the OTLP header values, not its query, so the collector's
// key went to stderr (a host's log file, the cluster's logs) whole. A URL's query is redacted too.
// Built service (`npm run build` first).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { launchService, stopService } from './service-process.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

describe("the collector's key in the query of an endpoint the SDK cannot read", () => {
  it('the warning names the endpoint without the key', { timeout: 25_000 }, async () => {
    const started = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      // A typo in the port: the URL cannot be parsed, and the SDK quotes it.
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://ingest.example.test:44e3/v1/traces?api-key=s3cret-query-token#part',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://ingest.example.test:44e3/v1/metrics?dataset=prod&token=s3cret-metrics-token'",
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    await started.url;
    // The service handles SIGTERM from just after this line (the URL on stdout comes before it).
    await expect.poll(() => started.stderr.join('').includes('listening on')).toBe(true);
    await stopService(started.child);
    expect(await started.exit).toBe(0);
    const logged = started.stderr.join('');
    expect(logged).toContain('Could not parse environment-provided export URL');
    expect(logged).toContain('https://ingest.example.test:44e3/v1/traces?[redacted]#part');
    expect(logged).toContain('https://ingest.example.test:44e3/v1/metrics?[redacted]');
    expect(logged).not.toContain('s3cret');
  });
});
