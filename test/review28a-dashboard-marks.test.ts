// Review 28a (after review28a-stacked-marks, the card): the campaign dashboard's list shows each
// campaign's name as the API gives it. Attacked: a campaign named "Promo" with 280 combining marks
// stacked on its last letter, between two ordinary campaigns. Found: in Debian's Chromium, from the
// built campaign server's campaign.list, the stack rose over the column headers and the row above
// and sank over the row below (their names, statuses and counts painted over). Now the view writes
// marks past 4 in a row on one letter as escapes (\u{301}), as the server's previews do.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

const MARKS = Array.from({ length: 280 }, (_, index) => String.fromCodePoint(0x300 + (index % 0x34))).join('');
/** The name as the view shows it: 4 marks as they are, the rest as escapes. */
const SHOWN = `Promo${MARKS.slice(0, 4)}${Array.from(MARKS.slice(4), (mark) => `\\u{${mark.codePointAt(0)!.toString(16).toUpperCase()}}`).join('')}`;

/** The list view with the second campaign named `name`, and the pixels of the rows around it (the header row, the first and the third). */
async function neighbours(name: string): Promise<Buffer[]> {
  sandbox.tenant('A').campaigns[1]!.name = name;
  const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' });
  hosted.push(view);
  await view.view.locator('tbody tr').nth(2).waitFor();
  return Promise.all(['thead tr', 'tbody tr >> nth=0', 'tbody tr >> nth=2'].map((row) => view.view.locator(row).screenshot({ animations: 'disabled' })));
}

describe('review28a: combining marks stacked on a campaign name in the dashboard list', { timeout: 60_000 }, () => {
  it('are not drawn over the rows around it', async () => {
    const plain = await neighbours('Promo');
    // The same text as it is shown, with no marks past 4: the row below sits where it sits beside the stacked name.
    const same = await neighbours(SHOWN);
    const stacked = await neighbours(`Promo${MARKS}`);
    expect([stacked[0]!.equals(plain[0]!), stacked[1]!.equals(plain[1]!), stacked[2]!.equals(same[2]!)]).toEqual([true, true, true]);
  });

  it('are shown whole: the first 4 as they are, the rest as escapes', async () => {
    sandbox.tenant('A').campaigns[1]!.name = `Promo${MARKS}`;
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' });
    hosted.push(view);
    const shown = await view.view.locator('tbody tr >> nth=1').locator('td.name').textContent();
    expect(shown).toBe(SHOWN);
  });
});
