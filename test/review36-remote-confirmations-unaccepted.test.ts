// Review 36 (remote): without Redis each key has a share of confirmations (review35,
// confirmation-budget.ts), and keys the API has not accepted share one allowance between them. A
// request is counted when it brings a confirmationToken or a requestState, before the value is
// checked: a made-up key sending values that were never issued ("not-a-token") uses up that
// allowance at no cost, no preview needed. A tenant's key is among those keys until this service has
// seen the API answer it, and a WhatsApp send's preview reads nothing: the tenant's yes was refused
// as "API keys the API has not accepted yet", which says its key is bad, and nothing said how to get
// past it. The refusal now says: one read with a valid key gives it a share of its own, and the same
// confirmation then goes through. Shown with an allowance of 50. (Since review37 a share is charged
// when a value is spent, so the allowance is used here with values a made-up key really spent.)
import { describe, expect, it } from 'vitest';
import { structuredOf, textOf } from './helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const file = servicePerFile({ confirmationBudget: { perKey: 100, unaccepted: 50 } });

const client = (key: string, domain = 'channel') => file.client(key, domain);

const send = (message: string, confirmationToken?: string) => ({
  name: 'channel_action',
  arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message }, ...(confirmationToken ? { confirmationToken } : {}) },
});

describe("values never issued, from a made-up key, and a tenant's first yes on this service", () => {
  it('the refusal says how to get past it, and past one read the same confirmation is carried out', { timeout: 60_000 }, async () => {
    // Spent values (review37: values never issued are no longer charged): each token brought back with other params is spent, and a fresh one comes back.
    const attacker = await client('made-up-key-0123456789abcdef');
    let spent = structuredOf((await attacker.callTool(send('x'))) as never).confirmationToken as string;
    for (let at = 0; at < 50; at++) spent = structuredOf((await attacker.callTool(send(`x ${at}`, spent))) as never).confirmationToken as string;
    const tenant = await client(file.sandbox.keys.otherTenant);
    const preview = structuredOf((await tenant.callTool(send('Your order shipped'))) as never);
    const token = preview.confirmationToken as string;
    const refused = await tenant.callTool(send('Your order shipped', token)).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(refused).toMatch(/too_many_confirmations/);
    expect(refused).toMatch(/nothing was run/);
    expect(refused).toMatch(/make one read with it first/);
    // As the refusal says: one read, then the same confirmation.
    const reader = await client(file.sandbox.keys.otherTenant, 'channel');
    expect((await reader.callTool({ name: 'channel_read', arguments: { operationId: 'channel.list' } })).isError).toBeFalsy();
    const done = await tenant.callTool(send('Your order shipped', token));
    expect(structuredOf(done as never).outcome, textOf(done as never)).toBe('done');
  });
});
