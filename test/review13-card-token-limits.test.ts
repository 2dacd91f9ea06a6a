// review13: two limits of the confirmation card that the card alone cannot close: both need the
// tool-call pipeline (shared/src/call: confirm.ts, confirmations.ts), which this review leaves as
// it is. Written as it.fails: each passes once the pipeline closes the gap.
// - Cancel discards the card's copy of the token and tells the model not to use it, but the token
//   is in the preview the model read, and the server still honours it for 5 minutes: a model
//   (prompt-injected, say) that uses it after the person pressed Cancel sends the campaign.
// - A token is bound to the operation, its params and the key, not to what the preview showed: for
//   campaign.send the params are the campaign's id, so a campaign whose message is changed (in the
//   tenant console) after the card was drawn is sent with the new message on Confirm, while the
//   card still shows the old one ("What is confirmed is what is sent").
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted: HostedView[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  [server, browser] = await Promise.all([launchServer('campaign', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full }), launchBrowser()]);
}, 60_000);
afterEach(async () => {
  await Promise.all(hosted.splice(0).map((view) => view.close()));
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await sandbox?.close();
});

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

  it.fails('a campaign whose message changed after the card was drawn is not sent on Confirm', async () => {
    const { card, id } = await cardForNewCampaign('Pesan berubah', 'Halo, promo akhir pekan!');
    await card.view.getByText('Halo, promo akhir pekan!', { exact: false }).waitFor();
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate._id === id)!;
    campaign.message = 'Pesan lain yang tidak pernah dilihat';
    const before = countCarriedOut(sandbox, 'campaign.send');
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    // Expected: a fresh preview with the new message, and nothing sent.
    await card.view.getByText('Pesan lain yang tidak pernah dilihat', { exact: false }).waitFor({ timeout: 5_000 });
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
  });
});
