// review13: the campaign dashboard refreshes a campaign's progress every 1.5 s while the API calls
// it active (sending, queued, pending, scheduled…), and stopped only when it was not, or after
// three failed reads. A campaign scheduled for next week, or one the API leaves "sending" with
// nothing moving (a stuck send, a hostile API), was read every 1.5 s for as long as the view was
// on screen: a view left in a conversation spent the tenant's rate limit on reads nobody asked
// for. The dashboard now stops when nothing has changed for 30 s (and after 10 minutes in all),
// says so, and offers Refresh.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { runClockFor, runClockUntil, showToolCall } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

describe('review13: a campaign that stays active with nothing moving', () => {
  it('is refreshed for 30 s without change, then no more: the view says so and offers Refresh', async () => {
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft')!;
    Object.assign(campaign, { status: 'sending', sentCount: 3, totalRecipients: Math.max(campaign.totalRecipients, 10) });
    // The view's clock is the test's: its 30 s pass as fast as its polls are answered.
    const dashboard = await showToolCall(
      browser,
      server.client as never,
      'campaign_read',
      { operationId: 'campaign.progress', params: { id: campaign._id } },
      { fakeClock: true },
    );
    hosted.push(dashboard);
    await dashboard.view.locator('#progress-text').waitFor();

    const stopped = dashboard.view.getByText(/^Stopped refreshing: no change for 30 s/);
    await runClockUntil(dashboard, () => dashboard.toolCalls.length > 1);
    await runClockUntil(dashboard, () => stopped.isVisible());
    const calls = dashboard.toolCalls.length;
    expect(calls).toBeGreaterThanOrEqual(20);
    expect(calls).toBeLessThanOrEqual(23);
    // A minute more of the view's time, the real event loop run between its steps: no other read.
    await runClockFor(dashboard, 60_000);
    await dashboard.view.getByRole('button', { name: 'Refresh' }).waitFor();
    expect(dashboard.toolCalls.length).toBe(calls);

    // Refresh starts again, on the person's click.
    await dashboard.view.getByRole('button', { name: 'Refresh' }).click();
    await runClockUntil(dashboard, () => dashboard.toolCalls.length > calls);
  });
});
