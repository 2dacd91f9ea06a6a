// review40: the host cancels the tool call a view was opened for (ui/notifications/tool-cancelled:
// the person pressed stop, or the host gave up on the call), in Debian's Chromium through the test
// host (packages/apps/host), the built campaign server and the sandbox behind it. The views did not
// listen for it:
// - A confirmation card whose preview was drawn kept its Confirm live: a yes the person could still
//   give, through the card, to a call that they and their host had stopped. Now the card withdraws
//   it (the token is forgotten, nothing is sent), says so, and draws no preview the host sends after.
// - A view cancelled before any result said "Loading…" for as long as it was on screen. The card now
//   says the call was cancelled and that a write needing no yes may still have been carried out (the
//   server carries a cancelled write out: review35); the dashboard says there is nothing to show.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { hostView, type CallToolResult, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';
import { countCarriedOut, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

/** A view for one call, as a host shows it; `result` undefined: the host has none to send. */
async function open(toolName: string, args: Record<string, unknown>, result: CallToolResult | undefined): Promise<HostedView> {
  const { tools } = await server.client.listTools();
  const tool = tools.find((candidate) => candidate.name === toolName);
  const uri = (tool?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
  if (!tool || !uri) throw new Error(`${toolName} names no ui:// view`);
  const [content] = (await server.client.readResource({ uri })).contents;
  const view = await hostView(browser, {
    html: (content as { text: string }).text,
    tool: tool as never,
    toolInput: args,
    toolResult: result,
    callTool: ({ name, arguments: toolArgs }) => server.client.callTool({ name, arguments: toolArgs }),
  });
  hosted.push(view);
  return view;
}

async function draftCampaign(name: string): Promise<string> {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message: 'Halo!', channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  return ((created.structuredContent as { data: { _id: string } }).data as { _id: string })._id;
}

describe('review40: the host cancels the call of a card whose preview is drawn', { timeout: 60_000 }, () => {
  it('withdraws Confirm, sends nothing, and draws no preview sent after', async () => {
    const args = { operationId: 'campaign.send', params: { id: await draftCampaign('Dihentikan') } };
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    expect(preview.structuredContent?.outcome).toBe('preview');
    const card = await open('campaign_action', args, preview);
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    await confirm.waitFor();

    await card.sendToolCancelled('the user stopped the response');
    await card.view.getByText('Cancelled by the host (the user stopped the response): campaign.send was not run').waitFor({ timeout: 10_000 });
    expect(await confirm.count()).toBe(0);
    // A host replaying the preview after its cancel: still no Confirm.
    await card.sendToolResult(preview);
    await card.view.getByText('Cancelled by the host').waitFor();
    expect(await confirm.count()).toBe(0);
    expect(card.toolCalls).toEqual([]);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  });

  it('a cancel after the person pressed Confirm leaves the card to its answer', async () => {
    const args = { operationId: 'campaign.send', params: { id: await draftCampaign('Sudah dikonfirmasi') } };
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const card = await open('campaign_action', args, preview);
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.sendToolCancelled();
    await card.view.getByText('Done', { exact: true }).waitFor({ timeout: 10_000 });
    expect(await card.view.getByText('Cancelled by the host').count()).toBe(0);
  });
});

describe('review40: the host cancels the call before any result', { timeout: 60_000 }, () => {
  it('the card says it was cancelled, and that a write needing no yes may have been carried out', async () => {
    const card = await open('campaign_action', { operationId: 'campaign.send', params: { id: await draftCampaign('Tanpa hasil') } }, undefined);
    await card.sendToolCancelled();
    await card.view.getByText('Outcome unknown').waitFor({ timeout: 10_000 });
    expect(await card.view.getByText(/The host cancelled this call before its answer came\. .*may have been carried out/).count()).toBe(1);
    expect(await card.view.getByText('Loading…').count()).toBe(0);
    expect(await card.view.getByRole('button').count()).toBe(0);
  });

  it('the dashboard says there is nothing to show', async () => {
    const view = await open('campaign_read', { operationId: 'campaign.list' }, undefined);
    await view.sendToolCancelled('timeout');
    await view.view.getByText('The host cancelled this call (timeout): there is nothing to show.').waitFor({ timeout: 10_000 });
    expect(await view.view.getByText('Loading…').count()).toBe(0);
  });
});
