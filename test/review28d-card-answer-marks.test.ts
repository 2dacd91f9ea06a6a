// Review 28d (noticed by review 28a, which escaped combining marks past 4 in a row on the card's
// statement and the dashboard, kit.ts withoutStackedMarks): after a write is done the card folds
// "What the API answered" (the API's data) under a details line, and showed it as it came.
// Attacked: campaign.create with a name carrying 150 combining marks (the API echoes the name).
// Found: on the card, drawn by Debian's Chromium from the built campaign server, the opened
// details held the 150 marks in a row, which a browser stacks on one letter, far out of its line
// (over the outcome and the statement above it). Now that text keeps at most 4 marks in a row
// too; the rest are written as escapes (\u{301}), as everywhere else the views show API text.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall } from '../packages/apps/host/harness.js';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ server, browser } = ready));

/** 150 combining marks, above and below, cycling through U+0300–U+0333. */
const MARKS = Array.from({ length: 150 }, (_, index) => String.fromCodePoint(0x300 + (index % 0x34))).join('');

describe('review28d: the card’s folded answer of a done write', { timeout: 60_000 }, () => {
  it('shows combining marks past 4 in a row as escapes, the name still whole', async () => {
    const args = { operationId: 'campaign.create', params: { name: `Promo${MARKS}`, message: 'Halo, promo akhir pekan!', channel: 'whatsapp' } };
    const card = await showToolCall(browser, server.client as never, 'campaign_action', args);
    hosted.push(card);
    // campaign.create runs at once unless this server asks for a yes first: press Confirm if it does.
    await card.view.locator('details, button.primary').first().waitFor();
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    if ((await confirm.count()) > 0) await confirm.click();
    const details = card.view.locator('details');
    await details.waitFor();
    await details.locator('summary').click();
    const answered = (await details.locator('p').textContent()) ?? '';
    expect(answered).toContain('Promo');
    expect(answered).not.toMatch(/\p{M}{5}/u);
    const escaped = Array.from(MARKS.slice(4), (mark) => `\\u{${mark.codePointAt(0)!.toString(16).toUpperCase()}}`).join('');
    expect(answered).toContain(`Promo${MARKS.slice(0, 4)}${escaped}`);
  });
});
