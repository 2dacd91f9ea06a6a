// review41: the ways a person presses the confirmation card's Confirm, now that a click whose count
// is 2 or more is no yes (review40: the second click of a double click landed on the new preview
// drawn after a refused token), in Debian's Chromium through the test host (packages/apps/host), the
// built campaign server and the sandbox behind it.
// - A click that did nothing (on the statement, on the muted line, on Confirm while it waited for
//   the call's details) and then a click on Confirm within the double-click time: the browser counts
//   that second click as 2. The card ignored it without a word, Confirm still there as if never
//   pressed: a yes the person meant, dropped silently. Now the card says that it took no yes and
//   how to give one (a single click), and the next single click confirms.
// - What held: Enter and Space (detail 0), Enter held down through a refused token's new preview
//   (focus is on the reason by then), element.click() as assistive tech calls it, a tap.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { CallToolResult, HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { hostConfirmCard, viewsPerFile } from './hosted-views.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

/** A card for campaign.send of a new draft, its preview drawn. */
async function sendCard(name: string, options: { hasTouch?: boolean } = {}): Promise<{ card: HostedView; id: string }> {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message: 'Halo!', channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  const id = (structuredOf(created as never).data as { _id: string })._id;
  const args = { operationId: 'campaign.send', params: { id } };
  const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
  expect(preview.structuredContent?.outcome).toBe('preview');
  const card = await hostConfirmCard(browser, server, args, preview, options);
  hosted.push(card);
  await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
  return { card, id };
}

/** Sent for real: the card says Done and the sandbox carried it out once more. */
async function expectSent(card: HostedView, before: number): Promise<void> {
  await card.view.getByText(/^Done/).waitFor({ timeout: 10_000 });
  expect(card.toolCalls).toHaveLength(1);
  expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before + 1);
}

describe('review41: a click counted as the second of a double click on Confirm', { timeout: 60_000 }, () => {
  it('is no yes, and the card says so and how to confirm; a single click then confirms', async () => {
    const { card } = await sendCard('Klik kedua');
    const before = countCarriedOut(sandbox, 'campaign.send');
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    // A first click that did nothing (next to the button), then one on Confirm the browser counts as the second.
    const box = (await confirm.boundingBox())!;
    await card.page.mouse.click(box.x + box.width / 2, box.y - 3, { clickCount: 1 });
    await card.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await card.page.mouse.down({ clickCount: 2 });
    await card.page.mouse.up({ clickCount: 2 });
    await card.view.getByText(/not taken as a yes.*click Confirm once/).waitFor({ timeout: 5_000 });
    expect(card.toolCalls).toEqual([]);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);

    await confirm.click();
    await expectSent(card, before);
  });
});

describe('review41: Confirm pressed other ways than a mouse click (what held)', { timeout: 60_000 }, () => {
  for (const key of ['Enter', 'Space'] as const) {
    it(`${key} on the focused Confirm confirms`, async () => {
      const { card } = await sendCard(`Tombol ${key}`);
      const before = countCarriedOut(sandbox, 'campaign.send');
      await card.view.getByRole('button', { name: 'Confirm' }).focus();
      await card.page.keyboard.press(key);
      await expectSent(card, before);
    });
  }

  it('Enter held down (the key repeating) on a Confirm whose token is refused sends once, and not the new preview', async () => {
    const { card, id } = await sendCard('Tombol ditahan');
    sandbox.tenant('A').campaigns.find((campaign) => campaign._id === id)!.totalRecipients += 7;
    const before = countCarriedOut(sandbox, 'campaign.send');
    await card.view.getByRole('button', { name: 'Confirm' }).focus();
    await card.page.keyboard.down('Enter');
    await card.view.getByText(/has changed since/).waitFor({ timeout: 10_000 });
    // The key repeats (a keydown with repeat set each time) after the new preview is drawn.
    for (let repeat = 0; repeat < 20; repeat++) await card.page.keyboard.down('Enter');
    await card.page.keyboard.up('Enter');
    expect(card.toolCalls).toHaveLength(1);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
  });

  it('element.click(), as assistive technology presses a button, confirms', async () => {
    const { card } = await sendCard('Pembaca layar');
    const before = countCarriedOut(sandbox, 'campaign.send');
    await card.view.getByRole('button', { name: 'Confirm' }).evaluate((button) => (button as unknown as { click(): void }).click());
    await expectSent(card, before);
  });

  it('a tap confirms', async () => {
    const { card } = await sendCard('Ketuk', { hasTouch: true });
    const before = countCarriedOut(sandbox, 'campaign.send');
    await card.view.getByRole('button', { name: 'Confirm' }).tap();
    await expectSent(card, before);
  });
});
