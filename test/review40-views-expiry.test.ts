// review40: a confirmation card left open past its token's expiry, in Debian's Chromium through the
// test host (packages/apps/host, the view's clock moved on by the test), the built campaign server
// and the sandbox behind it. The line under the statement was written once, when the card was drawn:
// "You can confirm until 20:19" still read so at 20:25, to a person who had left the card open and
// came back to say yes. It turns to "This confirmation expired at 20:19." when that moment passes
// (the server still decides: a yes sent after it is refused, and a new preview is drawn).
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { runClockUntil, type CallToolResult } from '../packages/apps/host/harness.js';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { hostConfirmCard, viewsPerFile } from './hosted-views.js';
import { structuredOf, textOf, WAIT_UNDER_LOAD } from './helpers.js';

let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ server, browser } = ready));

describe('review40: a card left open past its expiry', { timeout: 60_000 }, () => {
  it('says the confirmation expired once it has, not that one can still confirm', async () => {
    const created = await server.client.callTool({
      name: 'campaign_action',
      arguments: { operationId: 'campaign.create', params: { name: 'Dibiarkan terbuka', message: 'Halo!', channel: 'whatsapp' } },
    });
    expect(created.isError, textOf(created as never)).toBeFalsy();
    const args = { operationId: 'campaign.send', params: { id: (structuredOf(created as never).data as { _id: string })._id } };
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const expiresAt = Date.parse(String(preview.structuredContent?.expiresAt));
    expect(expiresAt).toBeGreaterThan(Date.now());
    const card = await hostConfirmCard(browser, server, args, preview, { fakeClock: true });
    hosted.push(card);
    const line = card.view.getByText(/^You can confirm until |^This confirmation expired at /);
    await card.view.getByText(/^You can confirm until /).waitFor();

    // The view's time moved past the expiry, in steps, the card on screen all along.
    const viewNow = () => card.frame.evaluate(() => Date.now());
    await runClockUntil(card, async () => (await viewNow()) > expiresAt + 1_000, { stepMs: 30_000, maxSteps: 40 });
    await expect.poll(() => line.textContent(), WAIT_UNDER_LOAD).toMatch(/^This confirmation expired at /);
    expect(card.toolCalls).toEqual([]);
  });
});
