// review40: campaigns whose name is empty or only blanks (a customer's, or what is left of one made
// of invisible characters the server takes out), in the dashboard's list, in Debian's Chromium
// through the test host (packages/apps/host), the built campaign server on a hostile API. The row
// had an empty name cell, so in a narrow frame nothing said which campaign it was, and its button
// was read out as "Show the progress of " (of nothing). Such a row is named by its id, as a row
// without a name already was.
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

const EMPTY = 'c0ffee00000000000000000e';
const BLANKS = 'c0ffee00000000000000000b';

describe('review40: a campaign named with nothing but blanks', { timeout: 60_000 }, () => {
  it('is named by its id in the list, and so is its Progress button', async () => {
    api.respond(() =>
      envelope([
        { _id: EMPTY, name: '', status: 'draft', channel: 'sms', totalRecipients: 5, sentCount: 0 },
        { _id: BLANKS, name: '   ', status: 'draft', channel: 'sms', totalRecipients: 5, sentCount: 0 },
      ]),
    );
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' }, { width: 320 });
    hosted.push(view);
    await view.view.locator('table').waitFor();
    expect(await view.view.locator('td.name').allTextContents()).toEqual([EMPTY, BLANKS]);
    await view.view.getByRole('button', { name: `Show the progress of ${EMPTY}` }).waitFor();
    await view.view.getByRole('button', { name: `Show the progress of ${BLANKS}` }).waitFor();
  });
});
