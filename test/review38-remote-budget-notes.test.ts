// The confirmation budget (review37-budget) notes who brought each value of our shape, in a map of at
// most 20,000 notes whose oldest is dropped, and charges a spend to that bringer (a value with no
// note: to the allowance of keys not yet accepted). Shape is all a note needed (`ct_<anything>`), and
// a made-up key noted four per request at no cost: a flood of them dropped a tenant's note between
// its arrival and its spend (a spend can wait: on the key's upstream slots, on the API's pace), and
// the tenant's yes was charged to, and refused by, the allowance the flood's own spends used up.
// Only an accepted key's note changes what is charged, so only those are kept, and one key keeps at
// most a few: another tenant's flood drops its own oldest, never someone else's.
import { describe, expect, it } from 'vitest';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { ConfirmationBudget } from '../packages/http/src/confirmation-budget.js';

const TENANT = 'tenant-fingerprint';
const OTHER_TENANT = 'other-tenant-fingerprint';
const accepted = new Set([TENANT, OTHER_TENANT]);

const auth = (keyId: string): AuthInfo => ({ token: 'unused', clientId: keyId, scopes: [] });
const bringing = (...tokens: string[]) =>
  tokens.map((token, id) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'channel_action', arguments: { confirmationToken: `${token}.sig` } },
  }));

function budget(): ConfirmationBudget {
  return new ConfirmationBudget({ perKey: 10, unaccepted: 1 }, (keyId) => accepted.has(keyId));
}

/** Notes `count` values of our shape that are never spent, four a request, each request with `keyOf(request)`. */
function flood(on: ConfirmationBudget, count: number, keyOf: (request: number) => string): void {
  for (let request = 0; request < count / 4; request++) {
    const values = [0, 1, 2, 3].map((at) => `ct_flood${request}x${at}`);
    expect(on.refusal(auth(keyOf(request)), bringing(...values))).toBeUndefined();
  }
}

describe("a tenant's noted confirmation", () => {
  it('is still charged to its own share after a flood of made-up keys', () => {
    const on = budget();
    expect(on.refusal(auth(TENANT), bringing('ct_tenantyes'))).toBeUndefined();
    flood(on, 20_000, (request) => `made-up-${request}`);
    // The flood spends one real value: the allowance of keys not yet accepted is used.
    on.chargeSpend('token:ct_flood0x0');
    expect(() => on.chargeSpend('token:ct_tenantyes')).not.toThrow();
  });

  it("is still charged to its own share after another tenant's flood", () => {
    const on = budget();
    expect(on.refusal(auth(TENANT), bringing('ct_tenantyes'))).toBeUndefined();
    flood(on, 20_000, () => OTHER_TENANT);
    expect(on.refusal(auth('made-up'), bringing('ct_madeupspent'))).toBeUndefined();
    on.chargeSpend('token:ct_madeupspent');
    expect(() => on.chargeSpend('token:ct_tenantyes')).not.toThrow();
  });
});
