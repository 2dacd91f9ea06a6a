// review24d: the campaign dashboard against a hostile API, in Debian's Chromium through the test
// host (packages/apps/host). The API's campaigns are set to values no real send has (more sent
// than recipients, negative counts, counts that are not numbers, names that are lists or objects,
// words longer than the frame) through the sandbox, and what the view writes is read back: a
// number is never shown as another, a value is never shown as something it is not, and nothing is
// drawn wider than a 320 px frame.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { runClockFor, runClockUntil, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { Campaign } from '../packages/sandbox/src/data.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

/** A campaign of tenant A, its fields set as a hostile API would have them; not sending, so the view does not poll it. */
function campaignWith(fields: Record<string, unknown>): Campaign {
  const campaigns = sandbox.tenant('A').campaigns;
  const campaign = { ...campaigns[0]!, _id: `c0ffee${String(campaigns.length).padStart(18, '0')}`, status: 'completed' } as Campaign;
  Object.assign(campaign, fields);
  campaigns.push(campaign);
  return campaign;
}

async function showProgress(id: string, width?: number, fakeClock = false): Promise<HostedView> {
  const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.progress', params: { id } }, { width, fakeClock });
  hosted.push(view);
  await view.view.locator('#progress-text').waitFor();
  return view;
}

const progressText = (view: HostedView) => view.view.locator('#progress-text').textContent();

/** The document's width against the frame's: nothing may need a horizontal scroll. */
function widths(view: HostedView): Promise<{ scroll: number; client: number }> {
  return view.frame.evaluate(() => {
    const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document;
    return { scroll: doc.documentElement.scrollWidth, client: doc.documentElement.clientWidth };
  });
}

describe('review24d: progress the API reports out of range is shown as reported', { timeout: 60_000 }, () => {
  it('more sent than recipients is not written as 100%', async () => {
    const campaign = campaignWith({ totalRecipients: 100, sentCount: 250 });
    const view = await showProgress(campaign._id);
    expect(await progressText(view)).toBe('250% sent · 250 of 100 recipients');
    // The bar cannot be drawn past full; its number says what the API said.
    expect(await view.view.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('100');
    expect(await view.view.getByRole('progressbar').getAttribute('aria-valuetext')).toBe('250% sent · 250 of 100 recipients');
  });

  it('a negative count is not written as 0%', async () => {
    const campaign = campaignWith({ totalRecipients: 100, sentCount: -30 });
    const view = await showProgress(campaign._id);
    expect(await progressText(view)).toBe('-30% sent · -30 of 100 recipients');
    expect(await view.view.getByRole('progressbar').getAttribute('aria-valuenow')).toBe('0');
  });

  it('progress the API does not give as a number is not written as 0%', async () => {
    // The API's percent is NaN (null in JSON), its sent count a text.
    const campaign = campaignWith({ totalRecipients: 100, sentCount: 'NaN' });
    const view = await showProgress(campaign._id);
    expect(await progressText(view)).not.toMatch(/^0%/);
    expect(await progressText(view)).toMatch(/not given/);
    expect(await view.view.getByRole('progressbar').getAttribute('aria-valuenow')).toBeNull();
    // What the API did say is still listed, as it came.
    await view.view.locator('dl.counts div', { hasText: 'Sent' }).getByText('NaN', { exact: true }).waitFor();
  });

  it('counts whose ratio is beyond any number are not written as an infinite percent', async () => {
    // Each count is a finite JSON number; sent over recipients is not (5 / 1e-320 is Infinity).
    const campaign = campaignWith({ totalRecipients: 1e-320, sentCount: 5 });
    const view = await showProgress(campaign._id);
    expect(await progressText(view)).not.toMatch(/∞|Infinity/);
    expect(await progressText(view)).toMatch(/^Progress not given/);
    expect(await view.view.getByRole('progressbar').getAttribute('aria-valuenow')).toBeNull();
  });

  it('a fraction below 100% is not rounded up to done', async () => {
    const campaign = campaignWith({ totalRecipients: 1_000_000, sentCount: 999_999 });
    const view = await showProgress(campaign._id);
    expect(await progressText(view)).toBe('99% sent · 999,999 of 1,000,000 recipients');
  });
});

describe('review24d: values of the wrong kind in the campaign list', { timeout: 60_000 }, () => {
  it('a name, channel or status given as a list or object is shown as what it is, not as text it is not', async () => {
    const campaign = campaignWith({ name: ['Promo', 'Ramadan'], channel: { primary: 'whatsapp' }, status: ['sending'] });
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' });
    hosted.push(view);
    const row = view.view.locator('tbody tr', { has: view.view.getByRole('button', { name: /Show the progress of/ }) }).filter({ hasText: 'Ramadan' });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toBe('["Promo","Ramadan"]');
    expect(cells[1]).toBe('{"primary":"whatsapp"}');
    expect(cells[2]).toBe('["sending"]');
    expect(await view.view.getByText('[object Object]').count()).toBe(0);

    // Its progress: the status as it came, not 'status not given'.
    await row.getByRole('button').click();
    await view.view.locator('#progress-text').waitFor();
    expect(view.toolCalls.at(-1)).toMatchObject({ arguments: { operationId: 'campaign.progress', params: { id: campaign._id } } });
    expect(await view.view.locator('.head .badge').textContent()).toBe('["sending"]');
  });
});

describe('review24d: a 320 px frame', { timeout: 60_000 }, () => {
  it('the list keeps each row’s Progress button inside the frame, whatever the length of its words', async () => {
    campaignWith({ name: 'N'.repeat(300), channel: 'c'.repeat(200), status: 's'.repeat(200), totalRecipients: 10 ** 15, sentCount: 10 ** 15 });
    // 320 px, and a common inline width where the list is still a table.
    for (const width of [320, 560]) {
      const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' }, { width });
      hosted.push(view);
      const button = view.view.getByRole('button', { name: `Show the progress of ${'N'.repeat(300)}` });
      await button.waitFor();
      const frame = (await view.page.locator('#view-frame').boundingBox())!;
      const box = (await button.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(frame.x + frame.width);
      const { scroll, client } = await widths(view);
      expect(scroll).toBeLessThanOrEqual(client);
    }
  });

  it('progress with huge counts and a long status stays inside the frame', async () => {
    const campaign = campaignWith({ totalRecipients: 1e300, sentCount: 1e300, status: 'S'.repeat(400) });
    const view = await showProgress(campaign._id, 320);
    expect(await progressText(view)).toMatch(/^100% sent · 1,000,000,000/);
    const { scroll, client } = await widths(view);
    expect(scroll).toBeLessThanOrEqual(client);
  });
});

describe('review24d: counts of many digits in the analytics chart', { timeout: 60_000 }, () => {
  it('a rate beyond any number is left out, not written as an infinite percent', async () => {
    const campaigns = sandbox.tenant('A').campaigns;
    for (const campaign of campaigns) Object.assign(campaign, { sentCount: 0, openedCount: 0, failedCount: 0 });
    Object.assign(campaigns[0]!, { sentCount: 1e-320, openedCount: 5, failedCount: 0 });
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.analytics' });
    hosted.push(view);
    await view.view.locator('ul.facts li', { hasText: 'Failed' }).waitFor();
    expect(await view.view.locator('ul.facts').textContent()).not.toMatch(/∞|Infinity/);
    expect(await view.view.locator('ul.facts li', { hasText: 'Opened' }).count()).toBe(0);
  });

  it('each number written beside its bar is drawn whole, inside the chart', async () => {
    const campaigns = sandbox.tenant('A').campaigns;
    for (const campaign of campaigns) Object.assign(campaign, { sentCount: 0, openedCount: 0, failedCount: 0 });
    Object.assign(campaigns[0]!, { sentCount: 123_456_789, openedCount: 12_345_678, failedCount: 1_234_567 });
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.analytics' });
    hosted.push(view);
    await view.view.getByRole('img', { name: 'Sent 123,456,789, Opened 12,345,678, Failed 1,234,567' }).waitFor();
    const drawn = await view.frame.evaluate(() => {
      type Text = { textContent: string; getAttribute(name: string): string; getComputedTextLength(): number };
      const doc = (
        globalThis as unknown as { document: { querySelector(s: string): { viewBox: { baseVal: { width: number } }; querySelectorAll(s: string): Text[] } } }
      ).document;
      const chart = doc.querySelector('svg.chart');
      return [...chart.querySelectorAll('text')].map((text) => ({
        text: text.textContent,
        right: Number(text.getAttribute('x')) + text.getComputedTextLength(),
        width: chart.viewBox.baseVal.width,
      }));
    });
    const values = drawn.filter((text) => /\d/.test(text.text));
    expect(values.map((text) => text.text)).toEqual(['123,456,789', '12,345,678', '1,234,567']);
    for (const value of values) expect(value.right, value.text).toBeLessThanOrEqual(value.width);
    // The counts above the chart: each number on one line, not broken between its digits.
    const lines = await view.frame.evaluate(() => {
      type Node = { textContent: string; firstChild: Node };
      const doc = (
        globalThis as unknown as {
          document: { querySelectorAll(s: string): Node[]; createRange(): { selectNodeContents(n: Node): void; getClientRects(): { length: number } } };
        }
      ).document;
      return [...doc.querySelectorAll('dl.counts dd')].map((dd) => {
        const range = doc.createRange();
        range.selectNodeContents(dd.firstChild);
        return `${dd.textContent}: ${range.getClientRects().length}`;
      });
    });
    expect(lines).toEqual(expect.arrayContaining(['123,456,789: 1', '12,345,678: 1', '1,234,567: 1']));
  });
});

describe('review24d: a status that names the view’s own classes', { timeout: 60_000 }, () => {
  it('is drawn as its text in a badge, not hidden or restyled by them', async () => {
    // Every word of a status became a class of its badge: 'sr-only' hid it, 'progress' drew it as a bar.
    const hidden = campaignWith({ status: 'completed sr-only' });
    const view = await showProgress(hidden._id, 320);
    const badge = view.view.locator('.head .badge');
    expect(await badge.textContent()).toBe('completed sr-only');
    expect(await badge.evaluate((node: { className: string }) => node.className)).not.toMatch(/(^|\s)sr-only(\s|$)/);
    expect((await badge.boundingBox())!.width).toBeGreaterThan(20);

    campaignWith({ name: 'Kelas palsu', status: 'draft progress notice-danger' });
    const list = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' });
    hosted.push(list);
    const listed = list.view.locator('tbody tr', { hasText: 'Kelas palsu' }).locator('.badge');
    await listed.waitFor();
    expect(await listed.evaluate((node: { className: string }) => node.className)).not.toMatch(/(^|\s)(progress|notice-danger)(\s|$)/);
  });
});

describe('review24d: refreshing while the API answers garbage', { timeout: 60_000 }, () => {
  for (const kind of ['not-envelope', 'html'] as const) {
    it(`(${kind}) stops after three failed reads, keeps the last progress it read, and offers Refresh`, async () => {
      const campaign = campaignWith({ status: 'sending', totalRecipients: 10, sentCount: 4 });
      // The view's clock is the test's: its polls come as fast as they are answered.
      const view = await showProgress(campaign._id, undefined, true);
      expect(await progressText(view)).toBe('40% sent · 4 of 10 recipients');
      // Enough for every attempt: the server retries a read that met a 5xx.
      sandbox.injectFault({ kind, operationId: 'campaign.progress', times: 50 });
      const stopped = view.view.getByText(/^Stopped refreshing: /);
      await runClockUntil(view, () => stopped.isVisible());
      const calls = view.toolCalls.length;
      expect(calls).toBe(3);
      expect(await progressText(view)).toBe('40% sent · 4 of 10 recipients');
      await view.view.getByRole('button', { name: 'Refresh' }).waitFor();
      // A minute more of the view's time, the real event loop run between its steps: no other read.
      await runClockFor(view, 60_000);
      expect(view.toolCalls.length).toBe(calls);
      sandbox.clearFaults();
    });
  }
});
