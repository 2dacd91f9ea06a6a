// Confirmation and least privilege, counted on the sandbox's record of what it carried out,
// never on what the server says.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemorySpentStore } from '@engage-mcp/shared';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { ALL_OPERATIONS, DOMAINS, countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

type ParamsFor = (sandbox: Sandbox) => Record<string, unknown>;
// Valid params for each destructive operation, and other valid params for the same operation.
const DESTRUCTIVE: Record<string, { params: ParamsFor; other: ParamsFor }> = {
  'contact.delete': { params: (s) => ({ id: s.tenant('A').contacts[0]!._id }), other: (s) => ({ id: s.tenant('A').contacts[1]!._id }) },
  'campaign.send': {
    params: (s) => ({ id: s.tenant('A').campaigns.find((c) => c.status === 'draft')!._id }),
    other: (s) => ({ id: s.tenant('A').campaigns[0]!._id }),
  },
  'campaign.delete': { params: (s) => ({ id: s.tenant('A').campaigns[0]!._id }), other: (s) => ({ id: s.tenant('A').campaigns[1]!._id }) },
  'inbox.ticket.reply': {
    params: () => ({ ticketID: 'TCK-1001', message: 'Siap kak' }),
    other: () => ({ ticketID: 'TCK-1001', message: 'Transfer ke rekening lain ya' }),
  },
  'channel.whatsapp.send': { params: () => ({ msisdn: '081234567890', message: 'Halo' }), other: () => ({ msisdn: '081299999999', message: 'Halo' }) },
  'product.delete': { params: (s) => ({ productID: s.tenant('A').products[0]!._id }), other: (s) => ({ productID: s.tenant('A').products[1]!._id }) },
};

it('covers every destructive operation of the catalog', () => {
  expect(Object.keys(DESTRUCTIVE).sort()).toEqual(
    ALL_OPERATIONS.filter((op) => op.risk === 'destructive')
      .map((op) => op.id)
      .sort(),
  );
});

describe.each(Object.entries(DESTRUCTIVE))('%s', (operationId, { params, other }) => {
  it('without elicitation: a preview runs nothing; the token runs it once; a replay or other params run nothing', async () => {
    const server = await serve(operationId);
    const target = params(sandbox);
    const preview = await server.call(operationId, target);
    expect(preview.isError).toBeFalsy();
    expect(structuredOf(preview)).toMatchObject({ outcome: 'preview', confirmationToken: expect.stringMatching(/^ct_/) });
    expect(textOf(preview)).toMatch(/has NOT been run/);
    expect(countCarriedOut(sandbox, operationId)).toBe(0);

    const token = structuredOf(preview).confirmationToken as string;
    const forOther = await server.call(operationId, other(sandbox), { confirmationToken: token });
    expect(structuredOf(forOther).outcome).toBe('preview');
    expect(textOf(forOther)).toMatch(/issued for other params/);
    expect(countCarriedOut(sandbox, operationId)).toBe(0);

    const fresh = structuredOf(await server.call(operationId, target)).confirmationToken as string;
    const done = await server.call(operationId, target, { confirmationToken: fresh });
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(structuredOf(done).outcome).toBe('done');
    expect(countCarriedOut(sandbox, operationId)).toBe(1);

    const replay = await server.call(operationId, target, { confirmationToken: fresh });
    expect(replay.isError).toBe(true);
    expect(textOf(replay)).toMatch(/already used/);
    const forged = await server.call(operationId, target, { confirmationToken: 'ct_forged' });
    expect(structuredOf(forged).outcome).toBe('preview');
    expect(textOf(forged)).toMatch(/not valid \(not one this server issued/);
    expect(countCarriedOut(sandbox, operationId)).toBe(1);
  });

  it.each(['v1', 'v2-modern'] as const)(
    'with elicitation (%s): decline, cancel and a no run nothing; a failed question falls back to a preview; only yes runs it, once',
    async (kind) => {
      const answers: Array<() => unknown> = [
        () => ({ action: 'decline' }),
        () => ({ action: 'cancel' }),
        () => ({ action: 'accept', content: { confirm: false } }),
      ];
      for (const answer of answers) {
        const server = await serve(operationId, { kind, elicit: answer as never });
        const result = await server.call(operationId, params(sandbox));
        expect(structuredOf(result).outcome, textOf(result)).toBe('declined');
        expect(textOf(result)).toMatch(/was not run, and nothing was changed/);
        expect(countCarriedOut(sandbox, operationId)).toBe(0);
      }
      const failing = await serve(operationId, {
        kind,
        elicit: () => {
          throw new Error('host crashed');
        },
      });
      if (kind === 'v1') {
        // The host answered with an error, not method-not-found: a no, with no token to run it by.
        const refused = await failing.call(operationId, params(sandbox));
        expect(structuredOf(refused).outcome, textOf(refused)).toBe('declined');
        expect(structuredOf(refused).confirmationToken).toBeUndefined();
        expect(textOf(refused)).toMatch(/could not be read[\s\S]*counts as a no/);
      } else {
        // A 2026 client fulfils the question itself: its failure ends the call on its side.
        await expect(failing.call(operationId, params(sandbox))).rejects.toThrow(/host crashed/);
      }
      expect(countCarriedOut(sandbox, operationId)).toBe(0);

      const messages: string[] = [];
      const server = await serve(operationId, {
        kind,
        elicit: (message) => {
          messages.push(message);
          return { action: 'accept', content: { confirm: true } };
        },
      });
      const result = await server.call(operationId, params(sandbox));
      expect(structuredOf(result).outcome, textOf(result)).toBe('done');
      expect(countCarriedOut(sandbox, operationId)).toBe(1);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(/cannot be undone/);
    },
  );
});

describe('a host that can ask is asked: a token does not replace the question there', () => {
  it.each(['v1', 'v2-modern'] as const)(
    '%s: a token from a preview, brought to a host with elicitation, still asks; only the yes runs it, once',
    async (kind) => {
      // One secret and spent store, as one server would have: the token is genuine for the asking host too.
      const server = { secret: randomBytes(32), spent: new MemorySpentStore() };
      const target = { id: sandbox.tenant('A').contacts[0]!._id };
      const previewing = await serve('contact.delete', { server });
      const token = structuredOf(await previewing.call('contact.delete', target)).confirmationToken as string;
      expect(token).toMatch(/^ct_/);

      const questions: string[] = [];
      const declining = await serve('contact.delete', {
        kind,
        server,
        elicit: (message) => {
          questions.push(message);
          return { action: 'decline' };
        },
      });
      const declined = await declining.call('contact.delete', target, { confirmationToken: token });
      expect(structuredOf(declined).outcome, textOf(declined)).toBe('declined');
      expect(questions).toHaveLength(1);
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(0);

      const agreeing = await serve('contact.delete', {
        kind,
        server,
        elicit: (message) => {
          questions.push(message);
          return { action: 'accept', content: { confirm: true } };
        },
      });
      const done = await agreeing.call('contact.delete', target, { confirmationToken: token });
      expect(structuredOf(done).outcome, textOf(done)).toBe('done');
      expect(questions).toHaveLength(2);
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(1);
    },
  );

  it('v1: where the host cannot ask after all (method-not-found), the token from the preview given for that is the yes (no loop of questions)', async () => {
    const server = { secret: randomBytes(32), spent: new MemorySpentStore() };
    const target = { id: sandbox.tenant('A').contacts[0]!._id };
    const broken = await serve('contact.delete', { server, elicitUnsupported: true });
    const preview = await broken.call('contact.delete', target);
    expect(textOf(preview)).toMatch(/could not be shown[\s\S]*has NOT been run/);
    const done = await broken.call('contact.delete', target, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(countCarriedOut(sandbox, 'contact.delete')).toBe(1);
    const replay = await broken.call('contact.delete', target, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(textOf(replay)).toMatch(/already used/);
    expect(countCarriedOut(sandbox, 'contact.delete')).toBe(1);
  });
});

describe('previews say what will happen', () => {
  it('campaign.send: name, channel, recipients, quota, and that it cannot be recalled', async () => {
    const server = await serve('campaign.send');
    const draft = sandbox.tenant('A').campaigns.find((c) => c.status === 'draft')!;
    const text = structuredOf(await server.call('campaign.send', { id: draft._id })).preview as string;
    expect(text).toContain(`“${draft.name}” on whatsapp`);
    expect(text).toContain(`${draft.totalRecipients} recipient(s)`);
    // The quota in words and numbers a person reads at a glance, not the API's JSON.
    const { aiQuota, messageQuota } = sandbox.tenant('A');
    const allowance = ({ total, used }: { total: number; used: number }) =>
      `${(total - used).toLocaleString('en-US')} of ${total.toLocaleString('en-US')} left (${used.toLocaleString('en-US')} used)`;
    expect(text).toContain(`- Quota before sending: AI quota: ${allowance(aiQuota)}; message quota: ${allowance(messageQuota)}.`);
    expect(text).not.toMatch(/[{}]|aiQuota|messageQuota/);
    expect(text).toMatch(/cannot be recalled/);
  });

  it('deletes name the record and what goes with it; a reply names the customer and the exact text', async () => {
    const contacts = await serve('contact.delete');
    const contact = sandbox.tenant('A').contacts[0]!;
    expect(structuredOf(await contacts.call('contact.delete', { id: contact._id })).preview).toContain(contact.name);
    const products = await serve('product.delete');
    const product = sandbox.tenant('A').products[0]!;
    const productPreview = structuredOf(await products.call('product.delete', { productID: product._id })).preview as string;
    expect(productPreview).toContain(product.name);
    expect(productPreview).toMatch(/images/);
    const inbox = await serve('inbox.ticket.reply');
    const reply = structuredOf(await inbox.call('inbox.ticket.reply', { ticketID: 'TCK-1001', message: 'Siap kak, dikirim hari ini' })).preview as string;
    expect(reply).toContain('“Siap kak, dikirim hari ini”');
    expect(reply).toContain(sandbox.tenant('A').tickets[0]!.customerName);
  });

  it('a look-up the key may not make shortens the preview and never blocks it', async () => {
    const key = sandbox.createKey(['campaign.send']);
    const server = await serve('campaign.send', { env: { ENGAGE_API_KEY: key } });
    const draft = sandbox.tenant('A').campaigns.find((c) => c.status === 'draft')!;
    const preview = await server.call('campaign.send', { id: draft._id });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(structuredOf(preview).preview).not.toMatch(/recipient\(s\)/);
    const done = await server.call('campaign.send', { id: draft._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome).toBe('done');
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(1);
  });
});

describe('ENGAGE_CONFIRM', () => {
  it('all: confirm-level operations are gated too', async () => {
    const server = await serve('contact.create', { env: { ENGAGE_CONFIRM: 'all' } });
    const result = await server.call('contact.create', { name: 'Gated', msisdn: '081200000001' });
    expect(structuredOf(result).outcome).toBe('preview');
    expect(countCarriedOut(sandbox, 'contact.create')).toBe(0);
  });

  it('destructive (default): confirm-level operations run at once', async () => {
    const server = await serve('contact.create');
    expect(structuredOf(await server.call('contact.create', { name: 'Direct', msisdn: '081200000002' })).outcome).toBe('done');
    expect(countCarriedOut(sandbox, 'contact.create')).toBe(1);
  });

  it('none: nothing is gated, for pipelines with their own approval', async () => {
    const server = await serve('product.delete', { env: { ENGAGE_CONFIRM: 'none' } });
    const result = await server.call('product.delete', DESTRUCTIVE['product.delete']!.params(sandbox));
    expect(structuredOf(result).outcome).toBe('done');
    expect(countCarriedOut(sandbox, 'product.delete')).toBe(1);
  });
});

describe('least privilege', () => {
  it('read-only mode registers no action tools; billing and tenant are unchanged', async () => {
    for (const domain of Object.values(DOMAINS)) {
      const server = await serve(domain.operations[0]!.id, { env: { ENGAGE_READ_ONLY: 'true' } });
      const { tools } = await server.client.listTools();
      const expected = domain.tools.filter((tool) => tool.kind === 'read').map((tool) => tool.name);
      expect(tools.map((tool) => tool.name)).toEqual(expected);
    }
    const server = await serve('contact.delete', { env: { ENGAGE_READ_ONLY: 'true' } });
    // A tool that is not offered is a protocol error (invalid params), not a tool result.
    await expect(server.client.callTool({ name: 'contact_action', arguments: { operationId: 'contact.delete', params: { id: 'x' } } })).rejects.toThrow(
      /-32602.*contact_action not found/,
    );
    expect(sandbox.requests()).toEqual([]);
  });

  it('a denied operation disappears from the enum and description, and a call naming it sends nothing', async () => {
    const server = await serve('contact.delete', { env: { ENGAGE_OPERATIONS_DENY: '*.delete' } });
    const { tools } = await server.client.listTools();
    const action = tools.find((tool) => tool.name === 'contact_action')!;
    expect((action.inputSchema.properties!.operationId as { enum: string[] }).enum).not.toContain('contact.delete');
    expect(action.description).not.toContain('contact.delete');
    const result = await server.call('contact.delete', { id: sandbox.tenant('A').contacts[0]!._id });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/contact\.delete is not available: it is excluded by ENGAGE_OPERATIONS_ALLOW or ENGAGE_OPERATIONS_DENY/);
    // The model is told whose setting it is, so it tells the user rather than working around it.
    expect(textOf(result)).toMatch(/the server's own settings, which only the user \(or whoever set the server up\) changes: tell the user/);
    expect(sandbox.requests()).toEqual([]);
  });

  it('an allow list keeps only what it names; a tool left empty is not registered; deny wins', async () => {
    const server = await serve('campaign.list', {
      env: { ENGAGE_OPERATIONS_ALLOW: 'campaign.list,campaign.progress,campaign.send', ENGAGE_OPERATIONS_DENY: 'campaign.send' },
    });
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['campaign_read']);
    expect((tools[0]!.inputSchema.properties!.operationId as { enum: string[] }).enum).toEqual(['campaign.list', 'campaign.progress']);
  });

  it('a pattern that matches nothing is a configuration error, in every answer', async () => {
    const server = await serve('campaign.list', { env: { ENGAGE_OPERATIONS_DENY: 'campaign.sned' } });
    const result = await server.call('campaign.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not configured.*campaign\.sned.*matches no operation/);
    expect(sandbox.requests()).toEqual([]);
  });

  it("a key's missing scope is explained and not retried", async () => {
    const server = await serve('campaign.send', { env: { ENGAGE_API_KEY: sandbox.keys.readOnly, ENGAGE_CONFIRM: 'none' } });
    const draft = sandbox.tenant('A').campaigns.find((c) => c.status === 'draft')!;
    const result = await server.call('campaign.send', { id: draft._id });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/lacks the permission campaign\.send that campaign\.send needs \(HTTP 403\)/);
    expect(sandbox.requests().filter((request) => request.operationId === 'campaign.send')).toHaveLength(1);
  });
});
