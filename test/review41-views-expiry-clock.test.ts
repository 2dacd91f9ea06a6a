// review41: the confirmation card's expiry line (review40: turned to "expired" by a timer set for the
// token's expiry) when the device's wall clock jumps, in Debian's Chromium through the test host
// (packages/apps/host, the view's clock moved by the test), the built campaign server and the
// sandbox behind it. A page's timers run on a clock that stops while the device sleeps; Date.now()
// does not. A laptop closed with the card open and opened an hour later showed "You can confirm
// until 20:19" at 21:20, and went on showing it for the minutes the timer still had to run (its
// five, or more for a longer expiry). Playwright's setSystemTime moves Date.now() as waking does,
// and no timer. Now the line is checked again at least every half minute, and when the view is
// shown again. An expiry the card cannot read is not written out as a time ("until garbage").
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { runClockFor, type CallToolResult, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { hostConfirmCard, viewsPerFile } from './hosted-views.js';
import { structuredOf, textOf } from './helpers.js';

let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ server, browser } = ready));

/** A campaign.send preview, and a card for it on a clock the test moves; `expiresAt` replaces the server's when given. */
async function cardOnFakeClock(name: string, expiresAt?: string): Promise<{ card: HostedView; expiresAt: number }> {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message: 'Halo!', channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  const args = { operationId: 'campaign.send', params: { id: (structuredOf(created as never).data as { _id: string })._id } };
  const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
  const shown = expiresAt === undefined ? preview : { ...preview, structuredContent: { ...preview.structuredContent, expiresAt } };
  const card = await hostConfirmCard(browser, server, args, shown, { fakeClock: true });
  hosted.push(card);
  await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
  return { card, expiresAt: Date.parse(String(preview.structuredContent?.expiresAt)) };
}

describe('review41: the expiry line when the wall clock jumps (the device slept)', { timeout: 60_000 }, () => {
  it('turns to expired within a minute of the jump, not when the timer would have run out', async () => {
    const { card, expiresAt } = await cardOnFakeClock('Tidur');
    await card.view.getByText(/^You can confirm until /).waitFor();
    await card.page.clock.setSystemTime(expiresAt + 60 * 60 * 1000);
    await runClockFor(card, 40_000);
    expect(await card.view.getByText(/^This confirmation expired at /).count()).toBe(1);
    expect(await card.view.getByText(/^You can confirm until /).count()).toBe(0);
  });

  it('turns to expired when the view is shown again after the jump', async () => {
    const { card, expiresAt } = await cardOnFakeClock('Bangun');
    await card.page.clock.setSystemTime(expiresAt + 60 * 60 * 1000);
    // What a browser does when a hidden tab or a woken device's page is shown again.
    await card.frame.evaluate(() => {
      const doc = (globalThis as unknown as { document: EventTarget }).document;
      doc.dispatchEvent(new Event('visibilitychange'));
    });
    await card.view.getByText(/^This confirmation expired at /).waitFor({ timeout: 5_000 });
  });
});

describe('review41: an expiry the card cannot read', { timeout: 60_000 }, () => {
  it('is not written out as the moment one can confirm until', async () => {
    const { card } = await cardOnFakeClock('Rusak', 'not a date');
    expect(await card.view.getByText(/not a date/).count()).toBe(0);
    expect(await card.view.getByText(/^You can confirm until /).count()).toBe(0);
  });
});
