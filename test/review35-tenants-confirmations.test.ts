// Review 35 (tenants): without Redis, spent confirmations are remembered in the service's memory,
// at most 100,000 for every tenant together, refusing every yes once full (a forgotten one could
// run again). A WhatsApp send's preview reads nothing, so even a made-up key gets a token at no cost
// upstream, and bringing it back spends it whatever params come with it (a fresh preview comes
// back, with a fresh token): anyone could fill that memory in minutes, and every tenant's yes was
// refused. Each key now has a share of confirmations per window, and keys the API has not accepted
// one between them. Shown here with a memory of 500 and shares of 100 and 200.
import { describe, expect, it } from 'vitest';
import { MemorySpentStore } from '../shared/src/call/confirmations.js';
import { structuredOf, textOf } from './helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const file = servicePerFile({ spent: new MemorySpentStore(Date.now, 500), confirmationBudget: { perKey: 100, unaccepted: 200 } });

const client = (key: string, domain = 'channel') => file.client(key, domain);

const send = (message: string, confirmationToken?: string) => ({
  name: 'channel_action',
  arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message }, ...(confirmationToken ? { confirmationToken } : {}) },
});

describe("made-up keys spending confirmations, and another tenant's yes", () => {
  it('the tenant key that the API accepted still has its yes carried out', { timeout: 120_000 }, async () => {
    // The tenant has used the service before: the API accepted its key.
    const reader = await client(file.sandbox.keys.otherTenant, 'tenant');
    expect((await reader.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } })).isError).toBeFalsy();
    let spent = 0;
    const refusals: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, at) => {
        const attacker = await client(`made-up-key-${at}-0123456789abcdef`);
        let token = structuredOf((await attacker.callTool(send('hi'))) as never).confirmationToken as string | undefined;
        // Each token brought back with other params is spent, and a fresh one comes back.
        for (let round = 0; token && round < 120; round++) {
          const answer = await attacker.callTool(send(`other ${round}`, token)).catch((error: Error) => void refusals.push(error.message));
          token = answer ? (structuredOf(answer as never).confirmationToken as string | undefined) : undefined;
          if (answer) spent++;
        }
      }),
    );
    expect(spent).toBeGreaterThanOrEqual(200);
    // Past their share, made-up keys are told so (429), and nothing runs.
    expect(refusals.length).toBeGreaterThan(0);
    for (const message of refusals) expect(message).toMatch(/too_many_confirmations.*API keys the API has not accepted yet/);
    const tenant = await client(file.sandbox.keys.otherTenant);
    const preview = structuredOf((await tenant.callTool(send('Your order shipped'))) as never);
    const done = await tenant.callTool(send('Your order shipped', preview.confirmationToken as string));
    expect(structuredOf(done as never).outcome, textOf(done as never)).toBe('done');
  });
});
