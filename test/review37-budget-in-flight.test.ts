// Review 37 (budget): a key's share of confirmations is charged when a value is spent, and a request
// is refused at the door only once that share is used. Requests in flight at once all pass the door
// together; the spend checks the share again, before the value is spent, so none goes past it. A
// value not spent after all (spent before, or refused by the store) gives its charge back.
import { describe, expect, it } from 'vitest';
import { ConfirmationBudget } from '../packages/http/src/confirmation-budget.js';

const NONCES = ['A', 'B', 'C'].map((letter) => `ct_${letter.repeat(22)}`);
const bringing = (nonce: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'channel_action', arguments: { confirmationToken: `${nonce}.zzzzzz.a.b.c` } },
});

describe('the share, with requests in flight at once', () => {
  it('all pass the door while the share is unused; the spend past it is refused, and a charge given back frees its place', () => {
    const budget = new ConfirmationBudget({ perKey: 2, unaccepted: 10 }, () => true);
    const authInfo = { token: 'key', clientId: 'fingerprint', scopes: [] };
    for (const nonce of NONCES) expect(budget.refusal(authInfo, bringing(nonce))).toBeUndefined();
    budget.chargeSpend(`token:${NONCES[0]}`);
    const giveBack = budget.chargeSpend(`token:${NONCES[1]}`);
    expect(() => budget.chargeSpend(`token:${NONCES[2]}`)).toThrow(/2 confirmations were already spent with this API key.*nothing was run/);
    expect(budget.refusal(authInfo, bringing(NONCES[2] as string))?.status).toBe(429);
    giveBack();
    expect(budget.refusal(authInfo, bringing(NONCES[2] as string))).toBeUndefined();
    expect(() => budget.chargeSpend(`token:${NONCES[2]}`)).not.toThrow();
  });
});
