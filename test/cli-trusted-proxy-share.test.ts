// The share of calls in flight that one client address may hold for keys not yet accepted
// (review38-remote) tells clients apart by the address a trusted proxy names
// (ENGAGE_TRUSTED_PROXY_HOPS). The service's command line did not pass that setting on unless OAuth
// was on, so behind a proxy every caller was the proxy's one address and shared one quarter of the
// bound: one client's made-up keys refused every other client's first calls. Checked on the built
// service, as an operator starts it.
import { describe, expect, it } from 'vitest';
import { until } from './helpers.js';
import { madeUpCall } from './helpers/made-up-call.js';
import { launchedServicePerFile } from './helpers/launched-service-per-file.js';

const file = launchedServicePerFile({ ENGAGE_TRUSTED_PROXY_HOPS: '1' });

const call = (index: number, forwardedFor: string, trickle: boolean) => madeUpCall(new URL('/mcp/contact', file.url), { index, forwardedFor, trickle });

describe('the built service behind one trusted proxy', () => {
  it("tells clients apart by the proxy's address: one client at its share does not hold back another", async () => {
    const held = Array.from({ length: 64 }, (_, index) => call(index, '192.0.2.7', true));
    try {
      let probe = 100;
      await until('the first client at its share', async () => (await call(probe++, '192.0.2.7', false).status) === 503);
      // Another client behind the same proxy: not refused at the door (its made-up key's call is answered).
      expect(await call(500, '198.51.100.9', false).status).not.toBe(503);
    } finally {
      for (const call of held) call.stop();
    }
  });
});
