// The bound on calls in flight of keys the API has not accepted yet (3eff1e9) was one for all such
// keys together: one address holding it (calls of made-up keys whose bodies trickle in, each held up
// to the 60 s receive bound, then sent again) refused the first call of every tenant this replica
// had not yet seen accepted (right after a deploy: every tenant), for as long as it went on. One
// address now holds at most a share of that bound (a quarter by default); the rest is others'.
import { describe, expect, it } from 'vitest';
import { until } from './helpers.js';
import { servicePerFile, type ServiceFile } from './helpers/service-per-file.js';
import { madeUpCall } from './helpers/made-up-call.js';

const direct = servicePerFile({ unacceptedInFlight: 4 });
/** The same, behind one proxy: the client is the address X-Forwarded-For names. */
const proxied = servicePerFile({ unacceptedInFlight: 4, trustedProxyHops: 1 });

const list = { name: 'contact_read', arguments: { operationId: 'contact.list' } };

/** A made-up key's call from another client than the tenant's: behind the proxy the same peer, told apart by the header alone. */
const call = (index: number, trickle: boolean, on: ServiceFile) =>
  madeUpCall(new URL('/mcp/contact', on.service.url), {
    index,
    forwardedFor: '192.0.2.7',
    trickle,
    length: 100_000,
    ...(on === proxied ? {} : { localAddress: '127.0.0.2' }),
  });

describe('calls in flight of keys not yet accepted, from one address', () => {
  it.each([
    ['its TCP peer', direct],
    ['the address its proxy names (ENGAGE_TRUSTED_PROXY_HOPS)', proxied],
  ])('(%s) hold only a share of the bound: a tenant new to this replica still gets its call through', async (_, on) => {
    const held = [1, 2, 3, 4].map((index) => call(index, true, on));
    try {
      // The address is at its share once one more of its calls is refused at the door.
      let probe = 100;
      await until('the address refused', async () => (await call(probe++, false, on).status) === 503);
      const tenant = await on.client(on.sandbox.createKey(['contact.read']), 'contact');
      // Before, the address held the whole bound: this was 503 unaccepted_keys_busy.
      const read = await tenant.callTool(list);
      expect(read.isError).toBeFalsy();
    } finally {
      for (const call of held) call.stop();
    }
  });
});
