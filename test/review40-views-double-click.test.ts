// review40: a double click on the confirmation card's Confirm when the server refuses the token
// (the campaign's audience changed after the card was drawn), in Debian's Chromium through the test
// host (packages/apps/host), the built campaign server and the sandbox behind it. The first click
// sends the token, which is refused: nothing runs, and the card draws the new preview, its Confirm
// where the pressed one was when the new statement is shorter by what the server's reason above it
// adds (here: a long campaign name renamed short, a few pixels apart). The second click of the double click (click count 2) landed on that new
// Confirm and sent the campaign to the new audience: a yes to a statement no one had read. Confirm
// now acts on a single click (or the keyboard) only; the next single click is a yes.
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

describe('review40: Confirm double-clicked on a preview whose token is refused', { timeout: 60_000 }, () => {
  it('the second click does not confirm the new preview drawn under it', async () => {
    const created = await server.client.callTool({
      name: 'campaign_action',
      arguments: { operationId: 'campaign.create', params: { name: 'Klik dua kali', message: 'Halo!', channel: 'whatsapp' } },
    });
    expect(created.isError, textOf(created as never)).toBeFalsy();
    const id = (structuredOf(created as never).data as { _id: string })._id;
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate._id === id)!;
    // A long name (a customer's, set in the console), cut at 300 characters in the statement: renamed
    // short before the yes, the new statement is shorter by about what the server's reason adds above it.
    campaign.name = 'Promo '.repeat(50).trim();
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id } });
    hosted.push(card);
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    await confirm.waitFor();
    campaign.name = 'Klik';
    campaign.totalRecipients += 500;
    const before = countCarriedOut(sandbox, 'campaign.send');

    // A double click, its second click after the refused token's new preview is drawn (a fast API).
    const box = (await confirm.boundingBox())!;
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    await card.page.mouse.click(x, y, { clickCount: 1 });
    await card.view.getByText(/has changed since/).waitFor({ timeout: 10_000 });
    // Here the new Confirm is drawn a few pixels from the pressed one, under the pointer; the second
    // click is sent to its middle, so that where fonts differ the test still clicks it.
    const moved = (await confirm.boundingBox())!;
    await card.page.mouse.move(moved.x + moved.width / 2, moved.y + moved.height / 2);
    await card.page.mouse.down({ clickCount: 2 });
    await card.page.mouse.up({ clickCount: 2 });
    await card.page.waitForTimeout(1_000);
    expect(card.toolCalls).toHaveLength(1);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);

    // A click of its own, once the person has read the new statement, is a yes.
    await confirm.click();
    await card.view.getByText(/^Done/).waitFor({ timeout: 10_000 });
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before + 1);
  });
});
