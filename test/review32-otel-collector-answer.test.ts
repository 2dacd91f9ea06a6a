// Review 32, telemetry against a collector whose error answers are long. The OTLP exporter keeps up
// to 4 MB of an error answer's body and the SDK logs it; our log first rid that text of URL
// credentials with a regular expression that backtracked over every run of letters and digits, in
// time growing with the square of the run: a 400 of 100 KB of letters held the whole service (every
// tenant's calls) for seconds, one of 4 MB for hours. The credentials are now found by a scan in
// linear time; the warning is logged and calls go on. Built service (`npm run build` first).
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { launchService, modernClient, stopService } from './service-process.js';

/** Just under the exporter's 4 MB cap on an answer's body, so the body is kept (and logged). */
const BODY_SIZE = 4 * 1024 * 1024 - 64 * 1024;

let sandbox: Sandbox;
let collector: Server;
let answered = 0;
beforeAll(async () => {
  sandbox = await startSandbox();
  collector = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answered++;
      // A body that quotes the endpoint (credentials and all), then a run of letters.
      const quoted = `unknown tenant for http://otel-user:s3cret-collector-pw@127.0.0.1/v1/traces: `;
      res.writeHead(400, { 'content-type': 'text/plain' }).end(quoted + 'a'.repeat(BODY_SIZE - quoted.length));
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => collector.close(() => resolve()));
  await sandbox?.close();
});

describe('a collector that answers an error with a long body', () => {
  it('the SDK warning is logged, with the credentials redacted, and the next call is answered', { timeout: 60_000 }, async () => {
    const { port } = collector.address() as { port: number };
    const started = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://otel-user:s3cret-collector-pw@127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    try {
      const client = await modernClient(await started.url, sandbox.keys.full, { domain: 'billing' });
      try {
        const first = await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
        expect(first.isError, textOf(first as never)).toBeFalsy();
        await expect.poll(() => answered > 0, { timeout: 15_000 }).toBe(true);
        // Before: the service sat in the redaction of this answer for hours; this line never came.
        await expect.poll(() => started.stderr.join('').includes('OTLPExporterError'), { timeout: 20_000 }).toBe(true);
        const second = await client.callTool({ name: 'billing_get', arguments: { operationId: 'billing.quota' } });
        expect(second.isError, textOf(second as never)).toBeFalsy();
      } finally {
        await client.close();
      }
      await stopService(started.child);
      expect(await started.exit).toBe(0);
      const logged = started.stderr.join('');
      expect(logged).toContain('unknown tenant for http://[redacted]@127.0.0.1/v1/traces');
      expect(logged).not.toContain('s3cret-collector-pw');
    } finally {
      // A service stuck in its event loop takes no SIGTERM.
      await stopService(started.child, 'SIGKILL');
    }
  });
});
