// review13: the confirmation card against a model that holds the token, and a campaign that
// changes while the card is on screen.
// - Cancel discards the card's copy of the token and tells the model not to use it, but the token
//   is in the preview the model read (a host without the card needs it there), and the server
//   still honours it until it expires: a model (prompt-injected, say) that uses it after the person
//   pressed Cancel sends the campaign. Voiding a token needs a new way to call the action tool,
//   which the tool's arguments (a contract with hosts' configs) do not have: kept as it.fails,
//   left for a decision (README, MCP Apps).
// - A yes is bound to the facts the preview showed (confirm.ts): a campaign whose audience grows
//   after the card was drawn is not sent on Confirm; the card shows the new preview instead. (Its
//   text is not among those facts: the API does not show a campaign's text; the preview says so.)
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready), { expectNoNetwork: false });

async function cardForNewCampaign(name: string, message: string) {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message, channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  const id = (structuredOf(created as never).data as { _id: string })._id;
  const args = { operationId: 'campaign.send', params: { id } };
  const card = await showToolCall(browser, server.client as never, 'campaign_action', args);
  hosted.push(card);
  await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
  return { card, args, id, token: structuredOf(card.result as never).confirmationToken as string };
}

describe('review13: what the card cannot enforce by itself', { timeout: 60_000 }, () => {
  it.fails('after Cancel, the token the model read from the preview runs nothing', async () => {
    const { card, args, token } = await cardForNewCampaign('Batal lalu model', 'Halo!');
    await card.view.getByRole('button', { name: 'Cancel' }).click();
    await card.view.getByText('Cancelled: campaign.send was not run, and nothing was sent.').waitFor();
    const before = countCarriedOut(sandbox, 'campaign.send');
    const byModel = await server.client.callTool({ name: 'campaign_action', arguments: { ...args, confirmationToken: token } });
    expect(structuredOf(byModel as never).outcome).not.toBe('done');
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
  });

  it('a campaign whose audience grew after the card was drawn is not sent on Confirm: the card shows it as it is now', async () => {
    const { card, id } = await cardForNewCampaign('Penerima bertambah', 'Halo, promo akhir pekan!');
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate._id === id)!;
    await card.view.getByText(`${campaign.totalRecipients} recipient(s)`, { exact: false }).waitFor();
    campaign.totalRecipients += 3;
    const before = countCarriedOut(sandbox, 'campaign.send');
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText(/has changed since/).waitFor({ timeout: 10_000 });
    await card.view.getByText(`${campaign.totalRecipients} recipient(s)`, { exact: false }).waitFor();
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
    // The new preview's Confirm is the person's yes to what they now see: it sends once.
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText(/^Done/).waitFor({ timeout: 10_000 });
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before + 1);
  });
});
