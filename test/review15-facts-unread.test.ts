// Review 15: a yes is checked against the facts read again, and a look-up that fails then leaves
// its fact out, so the check fails closed (right). But the model was told the record "has changed
// since (a record it read reads otherwise now)" when nothing changed and the API only did not
// answer: it would tell the person someone edited their campaign. The answer says what happened.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

const draft = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
const sends = () => countCarriedOut(sandbox, 'campaign.send');

describe('a fact that could not be read again at the yes is not called a change', () => {
  it('token: the campaign list fails when the token comes back: nothing is sent, and the new preview says the look-up failed', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'campaign.list', times: 5 });
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(refused).outcome, textOf(refused)).toBe('preview');
    expect(textOf(refused)).not.toMatch(/has changed since/);
    expect(textOf(refused)).toMatch(/could not be read again[\s\S]*nothing was run/);
    expect(sends()).toBe(0);
  });

  it.each(['v1', 'v2-modern'] as const)('%s: the campaign list fails while the person reads: nothing is sent, and the answer says why', async (kind) => {
    const campaign = draft();
    const server = await serve('campaign.send', {
      kind,
      elicit: () => {
        sandbox.injectFault({ kind: 'status', status: 503, operationId: 'campaign.list', times: 5 });
        return { action: 'accept', content: { confirm: true } };
      },
    });
    const refused = await server.call('campaign.send', { id: campaign._id });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).not.toMatch(/has changed since/);
    expect(textOf(refused)).toMatch(/could not be read again[\s\S]*was not run[\s\S]*Call again/);
    expect(sends()).toBe(0);
  });

  it('a real change is still called a change', async () => {
    const server = await serve('campaign.send');
    const campaign = draft();
    const preview = await server.call('campaign.send', { id: campaign._id });
    campaign.totalRecipients += 5;
    const refused = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(textOf(refused)).toMatch(/has changed since/);
    expect(sends()).toBe(0);
  });
});
