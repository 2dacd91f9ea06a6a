// review31: the campaign dashboard, attacked as a hostile API and a careless person, in Debian's
// Chromium through the test host (packages/apps/host), the built campaign server in between.
// - A record (campaign.analytics, campaign.progress) with a field named like one of Object's own
//   (constructor, toString, hasOwnProperty): its label was looked up in a plain object, which has
//   those by inheritance, so the label was a function and the view threw before drawing anything:
//   it stayed at "Loading…".
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { startHostileApi, type HostileApi } from './hostile-api.js';

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

async function show(args: Record<string, unknown>): Promise<HostedView> {
  const view = await showToolCall(browser, server.client as never, 'campaign_read', args);
  hosted.push(view);
  return view;
}

const COMPLETED = 'c0ffee000000000000000001';

describe('review31: a field named like one of Object’s own', { timeout: 60_000 }, () => {
  for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
    it(`campaign.analytics with a field "${name}" is drawn, the field among the others`, async () => {
      // Written as text: an object literal's "constructor" would be the field, but say it plainly.
      api.respond(() => ({ body: `{"status":200,"errorCode":0,"data":{"sent":120,"opened":40,"failed":2,"${name}":"x"}}` }));
      const view = await show({ operationId: 'campaign.analytics' });
      const counts = view.view.locator('dl.counts');
      await counts.waitFor({ timeout: 10_000 });
      expect(await counts.locator('dt').allTextContents()).toEqual([
        'Sent',
        'Opened',
        'Failed',
        name.charAt(0).toUpperCase() +
          name
            .slice(1)
            .replace(/([a-z])([A-Z])/g, '$1 $2')
            .toLowerCase(),
      ]);
    });
  }

  it('campaign.progress with a field "constructor" shows its counts', async () => {
    api.respond(() => ({
      body: `{"status":200,"errorCode":0,"data":{"_id":"${COMPLETED}","status":"completed","totalRecipients":100,"sentCount":100,"constructor":1}}`,
    }));
    const view = await show({ operationId: 'campaign.progress', params: { id: COMPLETED } });
    const counts = view.view.locator('dl.counts');
    await counts.locator('dt', { hasText: 'Constructor' }).waitFor({ timeout: 10_000 });
    expect(await counts.locator('dt').allTextContents()).toEqual(['Recipients', 'Sent', 'Constructor']);
  });
});
