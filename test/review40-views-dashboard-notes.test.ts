// review40: the server's notes on campaign.progress and campaign.analytics, in the dashboard, in
// Debian's Chromium through the test host (packages/apps/host), the built campaign server on a
// hostile API. An answer too large for the model is shortened by the server (long texts cut, long
// lists cut), and the answer says so in its notes; the list showed its notes, but progress and
// analytics did not: a record the server had cut was drawn as if it were whole (a customer-written
// field of 80,000 characters shown cut, with nothing saying it was). Their notes are shown now, and
// each refreshed reading's with it.
import { describe, expect, it } from 'vitest';
import { dashboardOnHostileApi } from './helpers/dashboard-on-hostile-api.js';
import { envelope } from './hostile-api.js';

const file = dashboardOnHostileApi();

const ID = 'c0ffee000000000000000001';
const SHORTENED = /The answer was too large and was shortened/;
const LONG_NOTE = `Catatan pelanggan: ${'panjang sekali '.repeat(5_500)}AKHIR`;

describe('review40: an answer the server shortened', { timeout: 60_000 }, () => {
  it('campaign.progress says so', async () => {
    file.api.respond(() => envelope({ _id: ID, status: 'completed', totalRecipients: 100, sentCount: 100, note: LONG_NOTE }));
    const view = await file.show({ operationId: 'campaign.progress', params: { id: ID } });
    expect(view.result.structuredContent?.notes).toEqual(expect.arrayContaining([expect.stringMatching(SHORTENED)]));
    await view.view.locator('#progress-text').waitFor();
    await view.view.getByText(SHORTENED).waitFor({ timeout: 5_000 });
  });

  it('campaign.analytics says so', async () => {
    file.api.respond(() => envelope({ sent: 120, opened: 40, failed: 2, note: LONG_NOTE }));
    const view = await file.show({ operationId: 'campaign.analytics' });
    await view.view.locator('dl.counts').waitFor();
    await view.view.getByText(SHORTENED).waitFor({ timeout: 5_000 });
  });
});
