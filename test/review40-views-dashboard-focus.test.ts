// review40: the campaign dashboard with the keyboard only, in Debian's Chromium through the test
// host (packages/apps/host), the built campaign server and the sandbox behind it.
// - Progress pressed (Enter) in the list: the list, and the button, were replaced by the progress
//   view, and keyboard focus fell to the document's body: nothing was read out, and Tab started
//   again from the top. Focus goes to the progress view's heading now, and Tab reaches Refresh.
// - Refresh pressed: the button hides while the view refreshes, and focus fell to the body again.
//   It waits on the progress summary (what is refreshed), and is back on Refresh when it shows again.
import { describe, expect, it } from 'vitest';
import type { Browser, Frame } from 'playwright-core';
import { showToolCall } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

/** The element that has keyboard focus in the view: its tag and text. */
function focused(frame: Frame): Promise<{ tag: string; text: string }> {
  return frame.evaluate(() => {
    const active = (globalThis as unknown as { document: { activeElement: { tagName: string; textContent: string | null } } }).document.activeElement;
    // The body's text is the view's whole script: only the start is told.
    return { tag: active.tagName, text: (active.textContent ?? '').slice(0, 80) };
  });
}

describe('review40: the dashboard with the keyboard only', { timeout: 60_000 }, () => {
  it('Progress pressed in the list: focus on the progress heading, then Tab to Refresh; Refresh keeps focus in the view', async () => {
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'completed')!;
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' });
    hosted.push(view);
    const progress = view.view.getByRole('button', { name: `Show the progress of ${campaign.name}` });
    await progress.focus();
    await view.page.keyboard.press('Enter');
    await view.view.locator('#progress-text').waitFor({ timeout: 10_000 });
    await expect.poll(() => focused(view.frame)).toEqual({ tag: 'H1', text: 'Campaign progress' });

    await view.page.keyboard.press('Tab');
    expect(await focused(view.frame)).toEqual({ tag: 'BUTTON', text: 'Refresh' });
    await view.page.keyboard.press('Enter');
    expect((await focused(view.frame)).tag).toBe('P');
    // A completed campaign is read once more, then Refresh is offered again, with the focus on it.
    await expect.poll(() => view.toolCalls.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => focused(view.frame)).toEqual({ tag: 'BUTTON', text: 'Refresh' });
  });
});
