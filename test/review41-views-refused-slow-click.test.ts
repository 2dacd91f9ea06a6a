// review41: two slow clicks on the confirmation card's Confirm when the server refuses the token (the
// campaign changed after the card was drawn), in Debian's Chromium through the test host
// (packages/apps/host, the view's clock moved only by the test), the built campaign server and the
// sandbox behind it. review40 made a click counted as the second of a double click no yes: the new
// preview drawn after the refusal lies under the pointer. A person who double-clicks slowly (the
// second click past the double-click time, so counted as 1) still sent the new statement, unread:
// the refusal comes back within a fraction of a second. Now the new preview's Confirm is held for a
// moment after it is drawn (as browsers hold the buttons of their own security prompts), saying so;
// a click after that is a yes.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { CallToolResult } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { hostConfirmCard, viewsPerFile } from './hosted-views.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

describe('review41: a slow second click on the preview drawn after a refused token', { timeout: 60_000 }, () => {
  it('is no yes until the new statement has been on screen a moment; a click after is', async () => {
    const created = await server.client.callTool({
      name: 'campaign_action',
      arguments: { operationId: 'campaign.create', params: { name: 'Klik pelan', message: 'Halo!', channel: 'whatsapp' } },
    });
    expect(created.isError, textOf(created as never)).toBeFalsy();
    const id = (structuredOf(created as never).data as { _id: string })._id;
    const args = { operationId: 'campaign.send', params: { id } };
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const card = await hostConfirmCard(browser, server, args, preview, { fakeClock: true });
    hosted.push(card);
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    await confirm.waitFor();
    sandbox.tenant('A').campaigns.find((campaign) => campaign._id === id)!.totalRecipients += 500;
    const before = countCarriedOut(sandbox, 'campaign.send');
    const clickConfirm = async () => {
      const box = (await confirm.boundingBox())!;
      await card.page.mouse.click(box.x + box.width / 2, box.y + box.height / 2, { clickCount: 1 });
    };

    await clickConfirm();
    await card.view.getByText(/has changed since/).waitFor({ timeout: 10_000 });
    // The second of two slow clicks: a click of its own (count 1), no time passed on the view's clock.
    await clickConfirm();
    await card.view.getByText(/Read the new statement/).waitFor({ timeout: 5_000 });
    expect(card.toolCalls).toHaveLength(1);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);

    await card.page.clock.runFor(2_000);
    await clickConfirm();
    await card.view.getByText(/^Done/).waitFor({ timeout: 10_000 });
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before + 1);
  });
});
