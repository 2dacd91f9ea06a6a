// Review 15: what moves on its own is shown, not bound (live()): the quota. But whether its
// look-up answered at all was bound: a quota read that failed at the yes (a 5xx, a 429, the 4 s
// look-up deadline) but not at the preview, or the other way round, read as "what the preview
// showed has changed", and a person's yes to an unchanged campaign was turned into another preview.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
const sends = () => countCarriedOut(sandbox, 'campaign.send');

describe('a live fact whose look-up fails on one side of the yes does not undo it', () => {
  it('token: the quota read fails when the token comes back: the unchanged campaign is sent once', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    expect(textOf(preview)).toMatch(/Quota before sending/);
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'billing.quota', times: 5 });
    const done = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it('token: the quota read failed for the preview and answers when the token comes back: sent once', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'billing.quota', times: 5 });
    const preview = await server.call('campaign.send', { id: campaign._id });
    expect(textOf(preview)).not.toMatch(/Quota before sending/);
    sandbox.clearFaults();
    const done = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it.each(['v1', 'v2-modern'] as const)('%s: the quota read fails while the person reads the question: their yes sends once', async (kind) => {
    const campaign = draft();
    const server = await serve('campaign.send', {
      kind,
      elicit: () => {
        sandbox.injectFault({ kind: 'status', status: 503, operationId: 'billing.quota', times: 5 });
        return { action: 'accept', content: { confirm: true } };
      },
    });
    const done = await server.call('campaign.send', { id: campaign._id });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(sends()).toBe(1);
  });

  it('a bound fact still binds: the campaign list fails when the token comes back: nothing is sent', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'campaign.list', times: 5 });
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(refused).outcome, textOf(refused)).toBe('preview');
    expect(sends()).toBe(0);
  });
});
