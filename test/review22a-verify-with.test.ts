// Review 22a: a write whose outcome is unknown (the connection broke after the API did the work)
// tells the model "it may have been carried out, so it was not repeated; check with <verifyWith>
// before trying again". Attacked: every write of the catalogs, the API doing the work and then
// dropping the connection, and the read that answer names made before and after. Found: for
// channel.whatsapp.send it named inbox.ticket.list (inbox server), which a WhatsApp send leaves
// untouched, so the check showed nothing and the model, told to check first, would send the
// message again. Now it names the read where a sent message shows (the message quota).
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { ALL_OPERATIONS, DOMAINS, domainOf, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => sandbox?.close());

/** Params that the sandbox carries out, for each write. */
function paramsFor(operationId: string): Record<string, unknown> {
  const A = sandbox.tenant('A');
  const draft = A.campaigns.find((campaign) => campaign.status === 'draft')!;
  const open = A.tickets.filter((ticket) => ticket.status === 'open');
  const table: Record<string, Record<string, unknown>> = {
    'contact.create': { name: 'Probe Person', msisdn: '6281299990001' },
    'contact.update': { id: A.contacts[0]!._id, name: 'Renamed Person' },
    'contact.delete': { id: A.contacts[1]!._id },
    'contact.import': { users: [{ name: 'Imported Person', msisdn: '6281299990002' }] },
    'campaign.create': { name: 'Probe campaign', message: 'Halo', channel: 'whatsapp' },
    'campaign.delete': { id: draft._id },
    'inbox.ticket.create': { msisdn: '6281299990003', channel: 'whatsapp', message: 'Halo' },
    'inbox.ticket.reply': { ticketID: open[0]!.ticketID, message: 'Terima kasih' },
    'inbox.ticket.close': { ticketID: open[1]!.ticketID },
    'channel.whatsapp.send': { msisdn: '6281299990004', message: 'Halo' },
    'product.create': { name: 'Probe product' },
    'product.update': { productID: A.products[0]!._id, price: 7 },
    'product.delete': { productID: A.products[1]!._id },
  };
  return table[operationId]!;
}

// campaign.send and campaign.cancel need a campaign under way; the others are carried out as they are.
const writes = ALL_OPERATIONS.filter((op) => op.risk !== 'safe' && !['campaign.send', 'campaign.cancel'].includes(op.id));

it.each(writes.map((op) => [op.id, op] as const))(
  'review22a: %s, its outcome unknown: the read it names shows that it was carried out',
  async (operationId, op) => {
    const verifyId = op.verifyWith!.split(' ')[0]!;
    const verifyOp = ALL_OPERATIONS.find((candidate) => candidate.id === verifyId)!;
    expect(verifyOp, `${operationId}'s verifyWith names ${verifyId}`).toBeDefined();
    const params = paramsFor(operationId);
    const env = { ENGAGE_CONFIRM: 'none' };
    const writer = await inProcess(domainOf(operationId), sandbox, { env });
    const checker = await inProcess(DOMAINS[verifyId.split('.')[0]!]!, sandbox, { env });
    try {
      const shape = (verifyOp.params as unknown as { shape: Record<string, unknown> }).shape;
      const verifyParams = Object.fromEntries(Object.entries(params).filter(([key]) => key in shape));
      const before = textOf(await checker.call(verifyId, verifyParams, verifyOp.list ? { limit: 500 } : {}));
      sandbox.injectFault({ kind: 'reset-after', operationId });
      const result = await writer.call(operationId, params);
      expect(structuredOf(result).outcome, textOf(result)).toBe('unknown');
      expect(textOf(result)).toContain(`check with ${op.verifyWith}`);
      expect(sandbox.carriedOut().filter((entry) => entry.operationId === operationId)).toHaveLength(1);
      const after = textOf(await checker.call(verifyId, verifyParams, verifyOp.list ? { limit: 500 } : {}));
      expect(after, `${verifyId} reads the same after ${operationId} was carried out`).not.toBe(before);
    } finally {
      await writer.close();
      await checker.close();
    }
  },
);
