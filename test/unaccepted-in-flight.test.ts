// Keys the API has not accepted yet (new or made-up: any string passes as a key until the API
// answers 401) share 2 upstream slots, but each could keep 16 calls in flight while they waited
// for them, each holding its request, up to the request deadline, with only the service's
// connection limit (16,384) over all of them: anyone could hold the service's memory without a key
// (review35-tenants). Calls of keys not yet accepted now share a bound of their own in flight
// (256 by default); past it a call is answered 503 at once, and keys the API has accepted are
// never held back by it.
import { describe, expect, it } from 'vitest';
import { requestsAtApi, until } from './helpers.js';
import { modernClient } from './service-process.js';
import { servicePerFile } from './helpers/service-per-file.js';

// Every client here is one address (127.0.0.1): its share is the whole bound.
const file = servicePerFile({ unacceptedInFlight: 3, unacceptedInFlightPerAddress: 3 });

const list = { name: 'contact_read', arguments: { operationId: 'contact.list' } };

describe('calls of keys the API has not accepted yet', () => {
  it('share a bound in flight: past it a call is refused at once; an accepted key goes through', async () => {
    // A tenant the API accepted before the flood.
    const tenant = await modernClient(file.service.url, file.sandbox.keys.full, { domain: 'contact' });
    expect((await tenant.callTool(list)).isError).toBeFalsy();
    const before = requestsAtApi(file.sandbox, 'contact.list');
    file.sandbox.injectFault({ kind: 'delay', operationId: 'contact.list', delayMs: 1_500, times: 3 });
    // Three valid keys this replica has not seen accepted yet: their first calls wait at the API (two
    // slots), the third for a slot.
    const fresh = await Promise.all([1, 2, 3].map(() => modernClient(file.service.url, file.sandbox.createKey(['contact.read']), { domain: 'contact' })));
    const madeUp = await modernClient(file.service.url, 'eng_live_madeup_0123456789abcdef0123', { domain: 'contact' });
    const held = fresh.map((client) =>
      client.callTool(list).then(
        () => 'answered',
        () => 'failed',
      ),
    );
    await until('two at the API', () => requestsAtApi(file.sandbox, 'contact.list') - before >= 2);
    const refused = await madeUp.callTool(list).then(
      (result) => JSON.stringify(result),
      (error: unknown) => String(error),
    );
    expect(refused).toMatch(/unaccepted_keys_busy.*not yet seen the API accept are in flight; retry in a moment/);
    const read = await tenant.callTool(list);
    expect(read.isError).toBeFalsy();
    expect(await Promise.all(held)).toEqual(['answered', 'answered', 'answered']);
    await Promise.all([tenant, madeUp, ...fresh].map((client) => client.close()));
  });
});
