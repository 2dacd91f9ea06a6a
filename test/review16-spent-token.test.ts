// Review 16: a confirmationToken spent without running anything (shown with other params, or
// whose facts changed before it came back) and then shown again with the call it was issued for
// was answered "it may already have been carried out … check with campaign.progress". Nothing
// was sent: the model would tell the person their campaign may have gone out. The answer says
// nothing was done with it; a token whose write was carried out still says so.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

/** The tenant's draft campaign, and another campaign (any id but the draft's makes other params). */
const drafts = () => {
  const { campaigns } = sandbox.tenant('A');
  const draft = campaigns.find((campaign) => campaign.status === 'draft');
  return [draft, campaigns.find((campaign) => campaign !== draft)];
};
const sends = () => countCarriedOut(sandbox, 'campaign.send');

describe('a token spent without running is not said to have maybe run', () => {
  it('spent by a call with other params, then shown with its own: nothing was carried out, and the answer says so', async () => {
    const server = await serve('campaign.send');
    const [campaign, other] = drafts();
    const preview = await server.call('campaign.send', { id: campaign!._id });
    const token = structuredOf(preview).confirmationToken;
    const mistaken = await server.call('campaign.send', { id: other!._id }, { confirmationToken: token });
    expect(structuredOf(mistaken).outcome).toBe('preview');
    const again = await server.call('campaign.send', { id: campaign!._id }, { confirmationToken: token });
    expect(again.isError).toBe(true);
    expect(structuredOf(again).outcome, textOf(again)).toBe('refused');
    expect(textOf(again)).not.toMatch(/may already have been carried out/);
    expect(textOf(again)).toMatch(/nothing was carried out with it[\s\S]*call without it/);
    expect(sends()).toBe(0);
  });

  it('spent because the facts changed, then shown again: nothing was carried out, and the answer says so', async () => {
    const server = await serve('campaign.send');
    const [campaign] = drafts();
    const preview = await server.call('campaign.send', { id: campaign!._id });
    const token = structuredOf(preview).confirmationToken;
    campaign!.totalRecipients += 3;
    expect(structuredOf(await server.call('campaign.send', { id: campaign!._id }, { confirmationToken: token })).outcome).toBe('preview');
    const again = await server.call('campaign.send', { id: campaign!._id }, { confirmationToken: token });
    expect(structuredOf(again).outcome, textOf(again)).toBe('refused');
    expect(textOf(again)).not.toMatch(/may already have been carried out/);
    expect(sends()).toBe(0);
  });

  it('a token that sent its write, then shown with other params and again with its own, still says it was carried out', async () => {
    const server = await serve('campaign.send');
    const [campaign, other] = drafts();
    const preview = await server.call('campaign.send', { id: campaign!._id });
    const token = structuredOf(preview).confirmationToken;
    expect(structuredOf(await server.call('campaign.send', { id: campaign!._id }, { confirmationToken: token })).outcome).toBe('done');
    await server.call('campaign.send', { id: other!._id }, { confirmationToken: token });
    const again = await server.call('campaign.send', { id: campaign!._id }, { confirmationToken: token });
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(textOf(again)).toMatch(/it was carried out at/);
    expect(sends()).toBe(1);
  });
});
