// review31: the campaign dashboard, attacked as a hostile API and a careless person, in Debian's
// Chromium through the test host (packages/apps/host), the built campaign server in between.
// - A record (campaign.analytics, campaign.progress) with a field named like one of Object's own
//   (constructor, toString, hasOwnProperty): its label was looked up in a plain object, which has
//   those by inheritance, so the label was a function and the view threw before drawing anything:
//   it stayed at "Loading…".
// - Progress pressed on one campaign, then on another before the first answered: whichever answer
//   came last was drawn, under the last campaign's id, so a slow answer for a completed campaign
//   was shown as "Campaign <the draft's id>: completed, 100 of 100" (and not refreshed, being done).
// - A search: the list said "1–1 of 3", as if two more were on other pages, when one campaign of
//   the three matched and there was no other page.
// - A count too small for the number format's three decimals (totalRecipients 1e-300, from a hostile
//   API) was written "0": the progress read "∞% sent · 5 of 0 recipients" beside "Recipients 0", a
//   count of none where the API gave one. Such a number is written as JavaScript writes it (1e-300).
import { describe, expect, it } from 'vitest';
import { dashboardOnHostileApi } from './helpers/dashboard-on-hostile-api.js';
import { envelope } from './hostile-api.js';

const file = dashboardOnHostileApi();
const show = (args: Record<string, unknown>) => file.show(args);

const COMPLETED = 'c0ffee000000000000000001';
const DRAFT = 'c0ffee000000000000000002';
const CAMPAIGNS = [
  { _id: COMPLETED, name: 'Lebaran', status: 'completed', channel: 'whatsapp', totalRecipients: 100, sentCount: 100 },
  { _id: DRAFT, name: 'Ramadan', status: 'draft', channel: 'sms', totalRecipients: 50, sentCount: 0 },
  { _id: 'c0ffee000000000000000003', name: 'Batik', status: 'draft', channel: 'sms', totalRecipients: 5, sentCount: 0 },
];

describe('review31: a field named like one of Object’s own', { timeout: 60_000 }, () => {
  for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
    it(`campaign.analytics with a field "${name}" is drawn, the field among the others`, async () => {
      // Written as text: an object literal's "constructor" would be the field, but say it plainly.
      file.api.respond(() => ({ body: `{"status":200,"errorCode":0,"data":{"sent":120,"opened":40,"failed":2,"${name}":"x"}}` }));
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
    file.api.respond(() => ({
      body: `{"status":200,"errorCode":0,"data":{"_id":"${COMPLETED}","status":"completed","totalRecipients":100,"sentCount":100,"constructor":1}}`,
    }));
    const view = await show({ operationId: 'campaign.progress', params: { id: COMPLETED } });
    const counts = view.view.locator('dl.counts');
    await counts.locator('dt', { hasText: 'Constructor' }).waitFor({ timeout: 10_000 });
    expect(await counts.locator('dt').allTextContents()).toEqual(['Recipients', 'Sent', 'Constructor']);
  });
});

describe('review31: Progress pressed on two campaigns, the first answering last', { timeout: 60_000 }, () => {
  it('shows the second campaign’s progress, never the first’s under the second’s id', async () => {
    let answerFirst = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      answerFirst = resolve;
    });
    file.api.respond(async (request) => {
      if (request.path.endsWith(`${COMPLETED}/progress`)) {
        await firstHeld;
        return envelope(CAMPAIGNS[0]);
      }
      if (request.path.endsWith(`${DRAFT}/progress`)) return envelope(CAMPAIGNS[1]);
      return envelope(CAMPAIGNS);
    });
    const view = await show({ operationId: 'campaign.list' });
    await view.view.getByRole('button', { name: 'Show the progress of Lebaran' }).click();
    await view.view.getByRole('button', { name: 'Show the progress of Ramadan' }).click();
    await view.view.locator('#progress-text', { hasText: '0 of 50 recipients' }).waitFor();
    // Now the first campaign's answer comes: late, and for a campaign no longer asked about.
    answerFirst();
    await expect.poll(() => view.toolCalls.length).toBe(2);
    await view.page.waitForTimeout(1000);
    expect(await view.view.locator('p.muted .mono').textContent()).toBe(DRAFT);
    expect(await view.view.locator('#progress-text').textContent()).toBe('0% sent · 0 of 50 recipients');
    expect(await view.view.locator('.head .badge').textContent()).toBe('draft');
  });
});

describe('review31: a search that matched some of the campaigns', { timeout: 60_000 }, () => {
  it('says how many matched, not how many there are in all as if the rest were on other pages', async () => {
    file.api.respond(() => envelope(CAMPAIGNS));
    const view = await show({ operationId: 'campaign.list', search: 'Ramadan' });
    await view.view.locator('table').waitFor();
    expect(view.result.structuredContent?.page).toMatchObject({ total: 3, matched: 1, offset: 0, returned: 1 });
    const range = await view.view.locator('.head .muted').textContent();
    expect(range).not.toMatch(/of 3$/);
    expect(range).toBe('1–1 of 1 matching (3 in all)');
  });
});

describe('review31: a count too small for three decimals', { timeout: 60_000 }, () => {
  it('is not written as 0', async () => {
    file.api.respond(() => envelope({ _id: COMPLETED, status: 'completed', totalRecipients: 1e-300, sentCount: 5, failedCount: -0.0001 }));
    const view = await show({ operationId: 'campaign.progress', params: { id: COMPLETED } });
    await view.view.locator('#progress-text').waitFor();
    const counts = await view.view.locator('dl.counts div').allTextContents();
    expect(counts).toEqual(['Recipients1e-300', 'Sent5', 'Failed-0.0001']);
    expect(await view.view.locator('#progress-text').textContent()).toMatch(/ · 5 of 1e-300 recipients$/);
  });
});
