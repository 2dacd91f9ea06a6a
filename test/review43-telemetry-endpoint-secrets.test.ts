// Review 43, telemetry and a collector's secret in an endpoint the SDK cannot parse, which it quotes
// as given in its warning (stderr: a host's log file, the cluster's logs). Our log redacted a URL's
// user:password only up to the first `/`, `?` or `#` (a password with one of them, not
// percent-encoded, as base64 has `/`, went out whole, or its part before a `#`), and not a URL's
// query at all (a collector's key as `?api-key=…`, as some ingest services take it). An endpoint
// setting's user information is now redacted up to its last `@`, and every URL's query.
// Built service (`npm run build` first).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { launchService, stopService } from './service-process.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

/** The service's stderr from start to stop, with these two endpoints set. */
async function loggedWith(traces: string, metrics: string): Promise<string> {
  const started = launchService({
    ENGAGE_BASE_URL: sandbox.baseUrl,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces,
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: metrics,
    OTEL_METRIC_EXPORT_INTERVAL: '600000',
  });
  await started.url;
  await stopService(started.child);
  expect(await started.exit).toBe(0);
  const logged = started.stderr.join('');
  expect(logged).toContain('Could not parse environment-provided export URL');
  expect(logged).not.toContain('s3cret');
  return logged;
}

describe("a collector's secret in an endpoint the SDK cannot read", () => {
  it('a password holding / or # (not percent-encoded): the warning names the endpoint without it', { timeout: 25_000 }, async () => {
    const logged = await loggedWith('http://otel-user:s3cret/Zq9+w==@127.0.0.1:4318/v1/traces', 'http://otel-user:s3cret#Zq9@127.0.0.1:4318/v1/metrics');
    expect(logged).toContain('http://[redacted]@127.0.0.1:4318/v1/traces');
    expect(logged).toContain('http://[redacted]@127.0.0.1:4318/v1/metrics');
  });

  it('a key in the query (a typo in the port makes the URL unreadable): the warning names the endpoint without it', { timeout: 25_000 }, async () => {
    const logged = await loggedWith(
      'https://ingest.example.test:44e3/v1/traces?api-key=s3cret-query-token#part',
      "https://ingest.example.test:44e3/v1/metrics?dataset=prod&token=s3cret-metrics-token'",
    );
    expect(logged).toContain('https://ingest.example.test:44e3/v1/traces?[redacted]#part');
    expect(logged).toContain('https://ingest.example.test:44e3/v1/metrics?[redacted]');
  });
});
