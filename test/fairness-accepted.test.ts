// Remote mode tells keys the API has accepted from new or made-up ones: the latter share a small
// upstream allowance and a small cap of 2025 sessions, so a flood of made-up keys cannot crowd out
// real tenants. A key counted as accepted after any answer but 401; an API that is down (5xx, from
// it or a gateway before it) or limiting by address (429) answers a made-up key so too, and a
// flood during an outage was then let into the accepted tenants' room. Now only an answer the API
// gives after reading the key says it is valid: 2xx, 3xx, and 4xx but 401 and 429 (403: a valid
// key without the scope). A 5xx or 429 leaves what was known as it was; a 401 forgets the key.
import { expect, it } from 'vitest';
import { Fairness } from '../packages/http/src/fairness.js';

async function answered(fairness: Fairness, keyId: string, status: number): Promise<void> {
  const release = await fairness.slotsOf(keyId).acquire(undefined);
  release(status);
}

it.each([200, 204, 304, 400, 403, 404, 409, 422])('a key answered %i is accepted', async (status) => {
  const fairness = new Fairness({ perKey: 2, unaccepted: 2 });
  await answered(fairness, 'key', status);
  expect(fairness.isAccepted('key')).toBe(true);
});

it.each([429, 500, 502, 503, 504])('a new key answered %i is not accepted, and an accepted one stays so', async (status) => {
  const fairness = new Fairness({ perKey: 2, unaccepted: 2 });
  await answered(fairness, 'made-up', status);
  expect(fairness.isAccepted('made-up')).toBe(false);
  await answered(fairness, 'real', 200);
  await answered(fairness, 'real', status);
  expect(fairness.isAccepted('real')).toBe(true);
});

it('a key answered 401 is forgotten, however it was answered before', async () => {
  const fairness = new Fairness({ perKey: 2, unaccepted: 2 });
  await answered(fairness, 'revoked', 200);
  await answered(fairness, 'revoked', 401);
  expect(fairness.isAccepted('revoked')).toBe(false);
});
