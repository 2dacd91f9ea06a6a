// Review 43, telemetry and a collector password that was not percent-encoded in its endpoint. A
// password with a `/`, `?` or `#` in it (base64 has `/`) makes the URL unparseable, and the SDK
// quotes the setting as given; our log redacted a URL's user information only up to the first `/`,
// `?` or `#`, so it found no `@` and the password went to stderr whole (or its first part, before a
// `#`). An endpoint setting's user information is now redacted up to its last `@`, whatever it holds.
// Built service (`npm run build` first).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { launchService, stopService } from './service-process.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox?.close());

describe('an endpoint whose password holds / or #, as given (not percent-encoded)', () => {
  it('the warning names the endpoint without the password', { timeout: 25_000 }, async () => {
    const started = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://otel-user:s3cret/Zq9+w==@127.0.0.1:4318/v1/traces',
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://otel-user:s3cret#Zq9@127.0.0.1:4318/v1/metrics',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    await started.url;
    // The service handles SIGTERM from just after this line (the URL on stdout comes before it).
    await expect.poll(() => started.stderr.join('').includes('listening on')).toBe(true);
    await stopService(started.child);
    expect(await started.exit).toBe(0);
    const logged = started.stderr.join('');
    expect(logged).toContain('Could not parse environment-provided export URL');
    expect(logged).toContain('http://[redacted]@127.0.0.1:4318/v1/traces');
    expect(logged).toContain('http://[redacted]@127.0.0.1:4318/v1/metrics');
    expect(logged).not.toContain('s3cret');
  });
});
