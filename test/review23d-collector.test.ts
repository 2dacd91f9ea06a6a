// Review 23d, telemetry against a collector that takes the connection and never answers (hung, or
// a proxy in front of a dead one). The built remote service answered its calls meanwhile, but on
// SIGTERM, once the calls had drained, it waited for the SDK's last exports: BatchSpanProcessor's
// and the metric reader's export timeouts, 30 s each by default, so a rolling restart's replica
// outlived its grace period. A stop now waits SHUTDOWN_WAIT_MS (2 s) for them, then exits.
// The endpoint carries credentials in its URL: no log line of the service shows them, also when
// the SDK cannot parse it (the second test).
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { launchService, modernClient, stopService } from './service-process.js';
import { textOf } from './helpers.js';

let sandbox: Sandbox;
let collector: Server;
/** Every connection the collector took; none is ever answered. */
const held: Socket[] = [];
/** What arrived on them (the OTLP requests' heads and bodies). */
let received = '';
beforeAll(async () => {
  sandbox = await startSandbox();
  collector = createServer((socket) => {
    held.push(socket);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => collector.close(() => resolve()));
  await sandbox?.close();
});

describe('a collector that never answers', () => {
  it('the remote service answers its calls, and a SIGTERM exits without waiting out the export timeouts', { timeout: 25_000 }, async () => {
    const { port } = collector.address() as { port: number };
    const started = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://otel-user:s3cret-collector-pw@127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      // The SDK's own waits, at their longest: only our bound ends the stop in time.
      OTEL_EXPORTER_OTLP_TIMEOUT: '600000',
      OTEL_BSP_EXPORT_TIMEOUT: '600000',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    const url = await started.url;
    const client = await modernClient(url, sandbox.keys.full, { domain: 'billing' });
    try {
      const first = await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
      expect(first.isError, textOf(first as never)).toBeFalsy();
      // The first batch of spans is at the collector, unanswered: the next call is answered all the same.
      await expect.poll(() => received.includes('POST /v1/traces'), { timeout: 10_000 }).toBe(true);
      const second = await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
      expect(second.isError, textOf(second as never)).toBeFalsy();
    } finally {
      await client.close();
    }
    await stopService(started.child);
    expect(await started.exit).toBe(0);
    expect(started.stderr.join('')).toContain('stopped');
    // The collector's credentials went where they belong (the exporter's request), and never to the log.
    expect(started.stderr.join('')).not.toContain('s3cret-collector-pw');
  });
});

// The SDK quotes an endpoint it cannot parse as it was given, with the collector's user:password;
// our log redacted the Engage key only, so the line went to stderr (a host's log file, the
// cluster's logs) whole. The user information, and any OTLP header value, is redacted now.
describe("the collector's credentials in a setting the SDK cannot read", () => {
  it('the warning says which setting, without the password in it', { timeout: 25_000 }, async () => {
    const started = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      // A typo in the port: the URL cannot be parsed.
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-user:s3cret-collector-pw@127.0.0.1:43l8',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=s3cret-header-token',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    await started.url;
    await stopService(started.child);
    const logged = started.stderr.join('');
    expect(logged).toContain('Could not parse environment-provided export URL');
    expect(logged).toContain('http://[redacted]@127.0.0.1:43l8');
    expect(logged).not.toContain('s3cret');
  });
});
