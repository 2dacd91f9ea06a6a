// The share of calls in flight that one client address may hold for keys not yet accepted
// (review38-remote) tells clients apart by the address a trusted proxy names
// (ENGAGE_TRUSTED_PROXY_HOPS). The service's command line did not pass that setting on unless OAuth
// was on, so behind a proxy every caller was the proxy's one address and shared one quarter of the
// bound: one client's made-up keys refused every other client's first calls. Checked on the built
// service, as an operator starts it.
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { until } from './helpers.js';
import { launchService, stopService } from './service-process.js';

let sandbox: Sandbox;
let url: string;
let child: ChildProcess | undefined;
beforeAll(async () => {
  sandbox = await startSandbox();
  const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_TRUSTED_PROXY_HOPS: '1' });
  child = started.child;
  url = await started.url;
}, 30_000);
afterAll(async () => {
  if (child) await stopService(child, 'SIGKILL');
  await sandbox?.close();
});

/** A POST of a made-up key from the client the proxy names; `trickle`: its body never finishes. Resolves with its status. */
function madeUpCall(index: number, client: string, trickle: boolean): { status: Promise<number | undefined>; stop(): void } {
  const req = request(new URL('/mcp/contact', url), {
    method: 'POST',
    headers: {
      'x-forwarded-for': client,
      authorization: `Bearer eng_live_madeup_${String(index).padStart(4, '0')}_0123456789abcdef`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': '1000',
    },
  });
  const status = new Promise<number | undefined>((resolve) => {
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.once('error', () => resolve(undefined));
  });
  req.write('{"jsonrpc":"2.0",');
  if (!trickle) req.end(' '.repeat(1000 - 17));
  return { status, stop: () => req.destroy() };
}

describe('the built service behind one trusted proxy', () => {
  it("tells clients apart by the proxy's address: one client at its share does not hold back another", async () => {
    const held = Array.from({ length: 64 }, (_, index) => madeUpCall(index, '192.0.2.7', true));
    try {
      let probe = 100;
      await until('the first client at its share', async () => (await madeUpCall(probe++, '192.0.2.7', false).status) === 503);
      // Another client behind the same proxy: not refused at the door (its made-up key's call is answered).
      expect(await madeUpCall(500, '198.51.100.9', false).status).not.toBe(503);
    } finally {
      for (const call of held) call.stop();
    }
  });
});
