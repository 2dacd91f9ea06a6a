// A person's yes is bound to what the preview's facts showed. A campaign that reads otherwise (its
// name, status or audience) between the preview (or question) and the yes is not sent on that yes, on every path:
// a token, a 2025 elicitation, a 2026-07-28 input_required round. What moves on its own (the quota,
// the count sent so far) does not undo a yes. Counted on the sandbox's record of what it carried out.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySpentStore } from '@engage-mcp/shared';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
const sends = () => countCarriedOut(sandbox, 'campaign.send');

describe("a token's yes is to what its preview showed", () => {
  it('the campaign reads otherwise since the preview: nothing is sent; a new preview shows it as it is, and its token sends once', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    expect(textOf(preview)).toContain(campaign.name);
    campaign.name = 'Promo lain yang tidak pernah ditunjukkan';

    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(sends()).toBe(0);
    expect(structuredOf(refused).outcome, textOf(refused)).toBe('preview');
    expect(textOf(refused)).toMatch(/has changed since[\s\S]*nothing was run[\s\S]*Promo lain yang tidak pernah ditunjukkan/);
    // The token was spent by that call: it cannot be brought back once the campaign is restored.
    const again = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(textOf(again)).toMatch(/already used/);
    expect(sends()).toBe(0);

    const done = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(refused).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it('its audience grew since the preview: nothing is sent', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    campaign.totalRecipients += 1000;
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(refused).outcome, textOf(refused)).toBe('preview');
    expect(textOf(refused)).toMatch(new RegExp(`has changed since[\\s\\S]*${campaign.totalRecipients} recipient`));
    expect(sends()).toBe(0);
  });

  it('the quota moved since the preview (other sends): the yes stands, and it is sent once', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    expect(textOf(preview)).toMatch(/Quota before sending/);
    sandbox.tenant('A').messageQuota.used += 7;
    const done = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it('campaign.cancel of a sending campaign: the count sent so far moves on its own, and the yes stands', async () => {
    const server = await serve('campaign.cancel', { env: { ENGAGE_CONFIRM: 'all' } });
    const campaign = draft();
    campaign.status = 'sending';
    const preview = await server.call('campaign.cancel', { id: campaign._id });
    expect(textOf(preview)).toMatch(/0 sent so far/);
    campaign.sentCount = 5;
    const done = await server.call('campaign.cancel', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(countCarriedOut(sandbox, 'campaign.cancel')).toBe(1);
  });
});

describe('a record the preview could not read is said, and a yes to that does not hold once it can be read', () => {
  it('campaign.send whose campaign list failed: the preview says so; the token then gets the campaign as it is, for a new yes', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'campaign.list', times: 1 }); // the preview's read alone
    const blind = await server.call('campaign.send', { id: campaign._id });
    expect(structuredOf(blind).preview).toMatch(/Campaign: could not be read now \(the look-up failed\)[^\n]*Check it before agreeing/);
    expect(structuredOf(blind).preview).not.toContain(campaign.name);

    const seen = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(blind).confirmationToken });
    expect(sends()).toBe(0);
    expect(structuredOf(seen).outcome, textOf(seen)).toBe('preview');
    expect(textOf(seen)).toMatch(/has changed since \(.*or could not be read then and can now\)/);
    expect(structuredOf(seen).preview).toContain(campaign.name);
    const done = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(seen).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it('a yes to "could not be read" holds while it still cannot be read: the person was told to check first', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'campaign.list', times: 10 });
    const blind = await server.call('campaign.send', { id: campaign._id });
    expect(structuredOf(blind).preview).toMatch(/Campaign: could not be read now/);
    const done = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(blind).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it.each([
    ['contact.delete', () => ({ id: sandbox.tenant('A').contacts[0]!._id }), 'contact.list', 'Contact'],
    ['inbox.ticket.reply', () => ({ ticketID: 'TCK-1001', message: 'Siap kak' }), 'inbox.ticket.list', 'Ticket'],
    ['product.delete', () => ({ productID: sandbox.tenant('A').products[0]!._id }), 'product.get', 'Product'],
  ] as const)('%s: a failed look-up is named in the preview, not left out', async (operationId, params, lookup, what) => {
    const server = await serve(operationId);
    sandbox.injectFault({ kind: 'status', status: 503, operationId: lookup, times: 5 });
    const preview = await server.call(operationId, params());
    expect(structuredOf(preview).outcome, textOf(preview)).toBe('preview');
    expect(structuredOf(preview).preview).toContain(`- ${what}: could not be read now`);
  });

  it('a record not in the list is said to be missing', async () => {
    const server = await serve('contact.delete');
    const preview = await server.call('contact.delete', { id: '0123456789abcdef01234567' });
    expect(structuredOf(preview).preview).toContain('- Contact: not in what the API lists now (the id may be wrong: check it before asking the user).');
  });
});

describe('what a fact read from this process, not the API, does not bind', () => {
  it('a campaign created through one server, previewed there and confirmed through another sharing its secret (two replicas): sent once', async () => {
    const shared = { secret: randomBytes(32), spent: new MemorySpentStore() };
    const [creator, other] = [await serve('campaign.send', { server: shared }), await serve('campaign.send', { server: shared })];
    const created = await creator.call('campaign.create', { name: 'Dua replika', message: 'Halo dari replika A', channel: 'whatsapp' });
    const id = (structuredOf(created).data as { _id: string })._id;
    const preview = await creator.call('campaign.send', { id });
    expect(textOf(preview)).toContain('Halo dari replika A'); // from the creator's own record: the other server has none
    const done = await other.call('campaign.send', { id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });
});

describe("a person's answer to a question is to what the question showed", () => {
  it.each(['v1', 'v2-modern'] as const)(
    '%s: the audience grows while the person reads; their yes sends nothing, and the next call asks again',
    async (kind) => {
      const campaign = draft();
      const questions: string[] = [];
      const server = await serve('campaign.send', {
        kind,
        elicit: (message) => {
          questions.push(message);
          if (questions.length === 1) campaign.totalRecipients += 1000;
          return { action: 'accept', content: { confirm: true } };
        },
      });
      const first = await server.call('campaign.send', { id: campaign._id });
      expect(first.isError).toBe(true);
      expect(textOf(first)).toMatch(/has changed since[\s\S]*was not run/);
      expect(sends()).toBe(0);

      const second = await server.call('campaign.send', { id: campaign._id });
      expect(questions[1]).toContain(`${campaign.totalRecipients} recipient(s)`);
      expect(structuredOf(second).outcome, textOf(second)).toBe('done');
      expect(sends()).toBe(1);
    },
  );

  it.each(['v1', 'v2-modern'] as const)('%s: a no stays a no, whatever changed meanwhile', async (kind) => {
    const campaign = draft();
    const server = await serve('campaign.send', {
      kind,
      elicit: () => {
        campaign.totalRecipients += 1000;
        return { action: 'decline' };
      },
    });
    const declined = await server.call('campaign.send', { id: campaign._id });
    expect(structuredOf(declined).outcome, textOf(declined)).toBe('declined');
    expect(sends()).toBe(0);
  });
});
