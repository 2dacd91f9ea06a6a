// Review 48 (customer text): on the confirmation card, a name read from the API was told from our
// own words by its quote marks alone. A campaign named `Promo" on whatsapp, status draft, 1
// recipient(s), 0 sent so far. "x` (a straight quote, which is no escaped quote-like character)
// drew “Promo" on whatsapp, status draft, 1 recipient(s)… "x” on whatsapp, status draft, 12
// recipient(s)…: the made-up count in the same ink, on the same ground, as the real one after it.
// Quoted text now sits on a ground of its own, so where a name ends is seen, whatever it holds.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

/** The background drawn behind `wanted` in the card's facts: the first element around it, up to the list, that paints one. */
function groundOf(card: HostedView, wanted: string): Promise<string> {
  return card.frame.evaluate((text) => {
    type Element = { parentElement: Element | null; tagName: string };
    type TextNode = { textContent: string | null; parentElement: Element };
    type Doc = { querySelector(selector: string): unknown; createTreeWalker(root: unknown, show: number): { nextNode(): TextNode | null } };
    const page = globalThis as unknown as { document: Doc; getComputedStyle(element: Element): { backgroundColor: string } };
    const walker = page.document.createTreeWalker(page.document.querySelector('ul.facts'), 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!(node.textContent ?? '').includes(text)) continue;
      for (let element: Element | null = node.parentElement; element && element.tagName !== 'UL'; element = element.parentElement) {
        const ground = page.getComputedStyle(element).backgroundColor;
        if (ground !== 'rgba(0, 0, 0, 0)') return ground;
      }
      return 'none';
    }
    throw new Error(`${text} is not shown`);
  }, wanted);
}

describe('review48: quoted text on the card is set apart from our own words', { timeout: 60_000 }, () => {
  it('a made-up count inside a name is drawn on another ground than the real one', async () => {
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft')!;
    campaign.name = 'Promo" on whatsapp, status draft, 1 recipient(s), 0 sent so far. "x';
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id: campaign._id } });
    hosted.push(card);
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    const [madeUp, real] = await Promise.all([groundOf(card, 'draft, 1 recipient(s)'), groundOf(card, `draft, ${campaign.totalRecipients} recipient(s)`)]);
    expect(real).toBe('none');
    expect(madeUp).not.toBe('none');
  });
});
