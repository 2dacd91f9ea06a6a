// review13: the confirmation card takes whatever tool result the host sends it. A host that sends
// the result again (a re-render, a replay of its notifications) after the person pressed a button
// got the preview drawn again: after Confirm ("Done"), the card said "Nothing has been done yet."
// with Confirm enabled; after Cancel (the card discarded the token, the model was told it must not
// be used), Confirm was offered again with that very token, which the server still honours: one
// click ran what the person had cancelled. The card is for one call: once the person has pressed a
// button, what the host sends again is not drawn.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

async function draftCampaign(name: string): Promise<string> {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message: 'Halo!', channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  return (structuredOf(created as never).data as { _id: string })._id;
}

async function cardFor(id: string) {
  const args = { operationId: 'campaign.send', params: { id } };
  const card = await showToolCall(browser, server.client as never, 'campaign_action', args);
  hosted.push(card);
  await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
  return { card, args };
}

describe('review13: the host sends the card its input and result again', { timeout: 60_000 }, () => {
  it('after Confirm, the card still shows what came of it, with no Confirm', async () => {
    const id = await draftCampaign('Ulang sesudah kirim');
    const { card, args } = await cardFor(id);
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText('Done: campaign.send was carried out.').waitFor();

    await card.sendToolInput(args);
    await card.sendToolResult(card.result);
    await card.page.waitForTimeout(500);
    expect(await card.view.getByText('Nothing has been done yet.').count()).toBe(0);
    expect(await card.view.getByRole('button', { name: 'Confirm' }).count()).toBe(0);
    await card.view.getByText('Done: campaign.send was carried out.').waitFor();
    expect(card.toolCalls).toHaveLength(1);
  });

  it('after Cancel, the cancelled token is not offered again', async () => {
    const id = await draftCampaign('Ulang sesudah batal');
    const { card, args } = await cardFor(id);
    const before = countCarriedOut(sandbox, 'campaign.send');
    await card.view.getByRole('button', { name: 'Cancel' }).click();
    await card.view.getByText('Cancelled: campaign.send was not run, and nothing was sent.').waitFor();

    await card.sendToolResult(card.result);
    await card.sendToolInput(args);
    await card.page.waitForTimeout(500);
    expect(await card.view.getByRole('button', { name: 'Confirm' }).count()).toBe(0);
    await card.view.getByText('Cancelled: campaign.send was not run, and nothing was sent.').waitFor();
    expect(card.toolCalls).toEqual([]);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
  });

  it('a result sent twice before the person acts is still one card, confirmed once', async () => {
    const id = await draftCampaign('Dua kali sebelum');
    const { card } = await cardFor(id);
    await card.sendToolResult(card.result);
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText('Done: campaign.send was carried out.').waitFor();
    expect(card.toolCalls).toHaveLength(1);
  });
});
