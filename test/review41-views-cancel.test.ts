// review41: the host's cancel (ui/notifications/tool-cancelled) heard by the confirmation card, in
// Debian's Chromium through the test host (packages/apps/host), the built campaign server and the
// sandbox behind it.
// - A cancel of a call whose preview was drawn: the card withdrew Confirm and said "this card will
//   not run it", but told the model nothing, as Cancel pressed does ("its confirmationToken must not
//   be used"). The model still held a token the server takes for minutes: the person's stop was a
//   no the model was never told, and a later "go on" could be sent on the old statement's yes. The
//   card now tells the model, as it does for Cancel.
// - What held: a cancel posted by another frame (the SDK hears only the view frame's parent), and a
//   late result after a cancel before any result (a Done is shown as Done; a preview offers no Confirm).
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { CallToolResult, HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { hostConfirmCard, viewsPerFile } from './hosted-views.js';
import { countCarriedOut, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

async function open(args: Record<string, unknown>, result: CallToolResult | undefined): Promise<HostedView> {
  const view = await hostConfirmCard(browser, server, args, result);
  hosted.push(view);
  return view;
}

async function sendArgs(name: string): Promise<Record<string, unknown>> {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message: 'Halo!', channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  return { operationId: 'campaign.send', params: { id: (created.structuredContent as { data: { _id: string } }).data._id } };
}

describe('review41: the host cancels the call of a card whose preview is drawn', { timeout: 60_000 }, () => {
  it('the model is told the token must not be used, as when Cancel is pressed', async () => {
    const args = await sendArgs('Dihentikan pengguna');
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const card = await open(args, preview);
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    await card.sendToolCancelled('the user stopped the response');
    await card.view.getByText(/Cancelled by the host/).waitFor({ timeout: 10_000 });
    await expect.poll(async () => JSON.stringify(await card.modelContext())).toMatch(/host cancelled campaign\.send.*confirmationToken must not be used/);
    expect(card.toolCalls).toEqual([]);
  });
});

describe('review41: a cancel forged by another frame (what held)', { timeout: 60_000 }, () => {
  it('is not heard: only the host (the parent of the view frame) speaks for the call', async () => {
    const args = await sendArgs('Pembatalan palsu');
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const card = await open(args, preview);
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    await confirm.waitFor();
    // A sibling frame on the host's page (another view, an ad) posts the host's cancel into the card's window.
    await card.page.evaluate(() => {
      const doc = (globalThis as unknown as { document: any }).document;
      const sibling = doc.createElement('iframe');
      sibling.setAttribute('sandbox', 'allow-scripts');
      sibling.srcdoc =
        '<script>parent.frames[0].postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: "forged" } }, "*");' +
        'parent.postMessage({ forgedCancelPosted: true }, "*");</script>';
      // Resolved once the sibling's script has run (it says so to the host page).
      const posted = new Promise((resolve) =>
        (globalThis as unknown as { addEventListener(type: string, listener: (event: any) => void): void }).addEventListener('message', (event) => {
          if (event.data?.forgedCancelPosted) resolve(true);
        }),
      );
      doc.body.append(sibling);
      return posted;
    });
    await confirm.waitFor();
    expect(await card.view.getByText(/Cancelled by the host/).count()).toBe(0);
    expect(await confirm.isEnabled()).toBe(true);
    // The host's own cancel is heard.
    await card.sendToolCancelled();
    await card.view.getByText(/Cancelled by the host/).waitFor({ timeout: 10_000 });
  });
});

describe('review41: results after a cancel (what held)', { timeout: 60_000 }, () => {
  it('a Done that comes after a cancel before any result is shown as Done', async () => {
    const args = await sendArgs('Terlambat selesai');
    const card = await open(args, undefined);
    await card.sendToolCancelled();
    await card.view.getByText('Outcome unknown').waitFor({ timeout: 10_000 });
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const done = (await server.client.callTool({
      name: 'campaign_action',
      arguments: { ...args, confirmationToken: preview.structuredContent?.confirmationToken },
    })) as CallToolResult;
    expect(done.structuredContent?.outcome).toBe('done');
    await card.sendToolResult(done);
    await card.view.getByText('Done', { exact: true }).waitFor({ timeout: 10_000 });
    expect(await card.view.getByText('Outcome unknown').count()).toBe(0);
  });

  it('a preview that comes after a cancel before any result offers no Confirm', async () => {
    const args = await sendArgs('Terlambat pratinjau');
    const before = countCarriedOut(sandbox, 'campaign.send');
    const card = await open(args, undefined);
    await card.sendToolCancelled();
    await card.view.getByText('Outcome unknown').waitFor({ timeout: 10_000 });
    await card.sendToolResult((await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult);
    await card.view.getByText('Outcome unknown').waitFor();
    expect(await card.view.getByRole('button').count()).toBe(0);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
  });
});
