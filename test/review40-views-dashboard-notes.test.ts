// review40: the server's notes on campaign.progress and campaign.analytics, in the dashboard, in
// Debian's Chromium through the test host (packages/apps/host), the built campaign server on a
// hostile API. An answer too large for the model is shortened by the server (long texts cut, long
// lists cut), and the answer says so in its notes; the list showed its notes, but progress and
// analytics did not: a record the server had cut was drawn as if it were whole (a customer-written
// field of 80,000 characters shown cut, with nothing saying it was). Their notes are shown now, and
// each refreshed reading's with it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

let api: HostileApi;
let server: LaunchedServer;
let browser: Browser;
const hosted: HostedView[] = [];
beforeAll(async () => {
  api = await startHostileApi();
  [server, browser] = await Promise.all([launchServer('campaign', { ENGAGE_BASE_URL: api.baseUrl, ENGAGE_API_KEY: api.key }), launchBrowser()]);
}, 60_000);
afterEach(async () => {
  for (const view of hosted) expect(view.networkRequests).toEqual([]);
  await Promise.all(hosted.splice(0).map((view) => view.close()));
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await api?.close();
});

const ID = 'c0ffee000000000000000001';
const SHORTENED = /The answer was too large and was shortened/;
const LONG_NOTE = `Catatan pelanggan: ${'panjang sekali '.repeat(5_500)}AKHIR`;

describe('review40: an answer the server shortened', { timeout: 60_000 }, () => {
  it('campaign.progress says so', async () => {
    api.respond(() => envelope({ _id: ID, status: 'completed', totalRecipients: 100, sentCount: 100, note: LONG_NOTE }));
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.progress', params: { id: ID } });
    hosted.push(view);
    expect(view.result.structuredContent?.notes).toEqual(expect.arrayContaining([expect.stringMatching(SHORTENED)]));
    await view.view.locator('#progress-text').waitFor();
    await view.view.getByText(SHORTENED).waitFor({ timeout: 5_000 });
  });

  it('campaign.analytics says so', async () => {
    api.respond(() => envelope({ sent: 120, opened: 40, failed: 2, note: LONG_NOTE }));
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.analytics' });
    hosted.push(view);
    await view.view.locator('dl.counts').waitFor();
    await view.view.getByText(SHORTENED).waitFor({ timeout: 5_000 });
  });
});
