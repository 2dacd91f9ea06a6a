// review31: the views' own Content Security Policy, in Debian's Chromium through the test host
// (packages/apps/host), whose frame is sandboxed (scripts only) but sets no CSP, as a host that does
// not apply the MCP Apps default (no network) would not. The views declared none of their own
// (README: "it loads nothing from the network, so it declares no CSP domains"), so whatever markup
// reached a view's document could reach the network: an <img> with a remote src, a stylesheet, a
// CSS background and a fetch all went out (here, to the harness's route, which refuses them). Every
// value the views show is set as text (no path for API text into markup was found), so this is a
// second wall: once started, a view's document loads nothing as code.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
// Requests are what these tests count: the hook's own check (none at all) is theirs here.
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready), { expectNoNetwork: false });

/**
 * Markup put into the view's document as an injection would put it (a remote image, a stylesheet,
 * a background image) and a fetch: the URLs that went out to the network (Chromium lists a load the
 * policy blocked as a request too, so they are counted where they would leave), and how the fetch
 * ended.
 */
async function inject(view: HostedView): Promise<{ reached: string[]; fetched: string }> {
  const reached: string[] = [];
  await view.page.route('https://example.invalid/**', (route) => {
    reached.push(route.request().url());
    return route.abort();
  });
  const fetched = await view.frame.evaluate(async () => {
    const scope = globalThis as unknown as {
      document: { body: { insertAdjacentHTML(where: string, html: string): void } };
      fetch(url: string): Promise<unknown>;
    };
    scope.document.body.insertAdjacentHTML(
      'beforeend',
      '<img src="https://example.invalid/pixel.png">' +
        '<link rel="stylesheet" href="https://example.invalid/style.css"><div style="background: url(https://example.invalid/bg.png)">x</div>',
    );
    const fetched = await scope.fetch('https://example.invalid/data').then(
      () => 'answered',
      () => 'refused',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    return fetched;
  });
  return { reached, fetched };
}

describe('review31: markup that reaches a view’s document', { timeout: 60_000 }, () => {
  it('the card: loads nothing', async () => {
    const id = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!._id;
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id } });
    hosted.push(card);
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    const injected = await inject(card);
    expect(injected.reached).toEqual([]);
    expect(injected.fetched).toBe('refused');
    // The card still works: Cancel sends nothing.
    await card.view.getByRole('button', { name: 'Cancel' }).click();
    await card.view.getByText('Cancelled: campaign.send was not run').waitFor();
  });

  it('the dashboard: loads nothing, and still reads the campaign', async () => {
    const campaign = sandbox.tenant('A').campaigns[0]!;
    const view = await showToolCall(browser, server.client as never, 'campaign_read', { operationId: 'campaign.list' });
    hosted.push(view);
    await view.view.locator('table').waitFor();
    const injected = await inject(view);
    expect(injected.reached).toEqual([]);
    expect(injected.fetched).toBe('refused');
    await view.view.getByRole('button', { name: `Show the progress of ${campaign.name}` }).click();
    await view.view.locator('#progress-text').waitFor();
  });
});
