// Attacked (review21): the owner's recipient caps against a campaign record whose count is smaller
// than its recipient list (totalRecipients 1, a list of many). 207019f says the statement then
// states the list's length, "and the caps count the list then"; the statement did, the caps did
// not: recipientCount took the count as soon as it was a whole number, so a send to the whole list
// passed ENGAGE_CAP_RECIPIENTS_PER_SEND set below the list's length (and the day's cap counted 1).
// Found: campaign.send was carried out past the cap.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('review21: a campaign whose count is smaller than its recipient list', () => {
  it('is capped by the list, not the count', async () => {
    const campaign = sandbox.tenant('A').campaigns.find((each) => each.status === 'draft')!;
    const listed = campaign.totalRecipients;
    expect(listed).toBeGreaterThan(1);
    Object.assign(campaign, { totalRecipients: 1 });
    const server = await serve('campaign.send', { env: { ENGAGE_CAP_RECIPIENTS_PER_SEND: String(listed - 1) } });
    const preview = await server.call('campaign.send', { id: campaign._id });
    const token = structuredOf(preview).confirmationToken as string | undefined;
    if (token) {
      const sent = await server.call('campaign.send', { id: campaign._id }, { confirmationToken: token });
      expect(sent.isError, textOf(sent)).toBe(true);
    }
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  });
});
