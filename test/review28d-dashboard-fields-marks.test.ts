// Review 28d (after review 28a escaped combining marks on the card's statement and in the
// dashboard's list): the dashboard also shows a record's other fields (campaign.analytics and
// campaign.progress: each field as a label and its value) and data of any other shape, as the API
// gives them. Attacked: an API whose campaign.analytics holds, beside its counts, a text field with
// 280 combining marks stacked on one letter. Found: in Debian's Chromium, from the built campaign
// server, the value was drawn with all 280 marks on its letter, rising out of its row over the
// counts around it. Now those values keep at most 4 marks in a row too (the rest as escapes,
// \u{301}), as everywhere else the views show API text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

/** 280 combining marks, above and below, cycling through U+0300–U+0333. */
const MARKS = Array.from({ length: 280 }, (_, index) => String.fromCodePoint(0x300 + (index % 0x34))).join('');
const ESCAPED = Array.from(MARKS.slice(4), (mark) => `\\u{${mark.codePointAt(0)!.toString(16).toUpperCase()}}`).join('');

let api: HostileApi;
let server: LaunchedServer;
let browser: Browser;
const hosted: HostedView[] = [];
beforeAll(async () => {
  api = await startHostileApi();
  [server, browser] = await Promise.all([launchServer('campaign', { ENGAGE_BASE_URL: api.baseUrl, ENGAGE_API_KEY: api.key }), launchBrowser()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(hosted.map((view) => view.close()));
  await browser?.close();
  await server?.close();
  await api?.close();
});

describe('review28d: combining marks in a field the dashboard shows', { timeout: 60_000 }, () => {
  it('campaign.analytics: a text field beside the counts keeps 4 marks in a row, the rest as escapes', async () => {
    api.respond(() => envelope({ campaigns: 3, sent: 120, opened: 40, failed: 2, plan: `Promo${MARKS}` }));
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.analytics' });
    hosted.push(view);
    const counts = view.view.locator('dl.counts');
    await counts.waitFor();
    const shown = (await counts.textContent()) ?? '';
    expect(shown).toContain('Promo');
    expect(shown).not.toMatch(/\p{M}{5}/u);
    expect(shown).toContain(`Promo${MARKS.slice(0, 4)}${ESCAPED}`);
  });

  it('data of another shape (a list where a record was expected) is shown the same way', async () => {
    api.respond(() => envelope([`Promo${MARKS}`]));
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.analytics' });
    hosted.push(view);
    const shownData = view.view.locator('p.statement');
    await shownData.waitFor();
    const shown = (await shownData.textContent()) ?? '';
    expect(shown).toContain('Promo');
    expect(shown).not.toMatch(/\p{M}{5}/u);
    expect(shown).toContain(`Promo${MARKS.slice(0, 4)}${ESCAPED}`);
  });
});
