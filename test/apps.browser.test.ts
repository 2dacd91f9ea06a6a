// The MCP Apps views in a real browser: Debian's headless Chromium (through playwright-core), a
// host page speaking the MCP Apps protocol with the ext-apps AppBridge, the built servers over
// stdio and the sandbox. What a write did is counted on the sandbox, never taken from the view.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf, WAIT_UNDER_LOAD } from './helpers.js';

type Result = Awaited<ReturnType<LaunchedServer['client']['callTool']>>;
type Args = { operationId: string; params?: Record<string, unknown> };

let sandbox: Sandbox;
let browser: Browser;
const servers = {} as Record<'campaign' | 'inbox', LaunchedServer>;
const hosted: HostedView[] = [];

beforeAll(async () => {
  // Sending takes four batches 1.5 s apart, so the dashboard sees it climb: at 700 ms, a loaded
  // machine (the full suite beside two other sessions) drew the dashboard after the send had ended.
  sandbox = await startSandbox({ sendStepMs: 1500 });
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full };
  const [campaign, inbox, launched] = await Promise.all([launchServer('campaign', env), launchServer('inbox', env), launchBrowser()]);
  Object.assign(servers, { campaign, inbox });
  browser = launched;
}, 60_000);
afterEach(async () => {
  sandbox.clearFaults();
  // A view never reaches the network: everything it needs is inline, its data comes through the host.
  for (const view of hosted) expect(view.networkRequests).toEqual([]);
  await Promise.all(hosted.splice(0).map((view) => view.close()));
});
afterAll(async () => {
  await browser?.close();
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await sandbox?.close();
});

function call(domain: 'campaign' | 'inbox', tool: string, args: Args & { confirmationToken?: unknown }): Promise<Result> {
  return servers[domain].client.callTool({ name: tool, arguments: args });
}

/** Shows a tool call in its view, as an MCP Apps host would (the harness's showToolCall), and closes it after the test. */
async function show(domain: 'campaign' | 'inbox', toolName: string, args: Args, theme: 'light' | 'dark' = 'light') {
  const view = await showToolCall(browser, servers[domain].client as never, toolName, args, { theme });
  hosted.push(view);
  return view;
}

async function draftCampaign(name: string): Promise<string> {
  const created = await call('campaign', 'campaign_action', {
    operationId: 'campaign.create',
    params: { name, message: 'Halo, promo akhir pekan!', channel: 'whatsapp' },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  return (structuredOf(created as never).data as { _id: string })._id;
}

const injectedFlag = (view: HostedView) => view.frame.evaluate(() => (globalThis as Record<string, unknown>).__engageInjected);

describe('the confirmation card', { timeout: 60_000 }, () => {
  it('Confirm sends the same call with the card’s token, once; a second click sends nothing', async () => {
    const id = await draftCampaign('Kartu konfirmasi');
    const args = { operationId: 'campaign.send', params: { id } };
    const card = await show('campaign', 'campaign_action', args);
    const token = structuredOf(card.result as never).confirmationToken;
    await card.view.getByText(`Send campaign ${id} now`).waitFor();
    await card.view.getByText('This cannot be undone').waitFor();
    // The quota in words and numbers, not the API's JSON.
    await card.view.getByText(/^Quota before sending: AI quota: [\d,]+ of [\d,]+ left \([\d,]+ used\); message quota: [\d,]+ of [\d,]+ left/).waitFor();
    expect(await card.view.locator('ul.facts').textContent()).not.toMatch(/[{}]|aiQuota|messageQuota/);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);

    // The API answers slowly, so the second click lands while the first call is in flight.
    sandbox.injectFault({ kind: 'delay', operationId: 'campaign.send', delayMs: 1500 });
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    await confirm.click();
    await confirm.click({ force: true });
    // Even a button enabled again by hand sends nothing: the card has let go of the token.
    await confirm.evaluate((button: { disabled: boolean; click(): void }) => {
      button.disabled = false;
      button.click();
    });
    await card.view.getByText('Done', { exact: true }).waitFor();
    await card.view.getByText('Done: campaign.send was carried out.').waitFor();

    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(1);
    expect(card.toolCalls).toEqual([{ name: 'campaign_action', arguments: { ...args, confirmationToken: token }, _meta: expect.anything() }]);
    // The model is told what the person decided.
    expect(JSON.stringify(await card.modelContext())).toContain('The user confirmed campaign.send');
  });

  it('Cancel, reached with the keyboard, discards the token and sends nothing', async () => {
    const id = await draftCampaign('Batal');
    const card = await show('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id } });
    await card.view.getByRole('button', { name: 'Cancel' }).waitFor();
    const sendsBefore = countCarriedOut(sandbox, 'campaign.send');

    const focused = () =>
      card.frame.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } | null } }).document.activeElement?.textContent);
    await card.page.keyboard.press('Tab');
    expect(await focused()).toBe('Confirm');
    await card.page.keyboard.press('Tab');
    expect(await focused()).toBe('Cancel');
    await card.page.keyboard.press('Enter');

    await card.view.getByText(`Cancelled: campaign.send was not run, and nothing was sent.`).waitFor();
    expect(await card.view.getByRole('button').count()).toBe(0);
    expect(card.toolCalls).toEqual([]);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(sendsBefore);
    expect(JSON.stringify(await card.modelContext())).toContain('pressed Cancel');
  });

  it('shows a refusal, and an unknown outcome with the read that tells', async () => {
    const refusedId = await draftCampaign('Ditolak');
    const refused = await show('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id: refusedId } });
    sandbox.injectFault({ kind: 'status', status: 409, operationId: 'campaign.send' });
    await refused.view.getByRole('button', { name: 'Confirm' }).click();
    await refused.view.getByText('Refused: nothing was done').waitFor();

    const unknownId = await draftCampaign('Tidak pasti');
    const unknown = await show('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id: unknownId } });
    // The API does the work, then the connection drops before it answers.
    sandbox.injectFault({ kind: 'reset-after', operationId: 'campaign.send' });
    await unknown.view.getByRole('button', { name: 'Confirm' }).click();
    await unknown.view.getByText('Outcome unknown').waitFor();
    await unknown.view.getByText('Check with campaign.progress before trying again.').waitFor();
    expect(unknown.toolCalls).toHaveLength(1);
  });

  it('when the model used the card’s token first, the card says it was carried out, not refused', async () => {
    const id = await draftCampaign('Token dipakai model');
    const args = { operationId: 'campaign.send', params: { id } };
    const card = await show('campaign', 'campaign_action', args);
    const token = structuredOf(card.result as never).confirmationToken;
    const sendsBefore = countCarriedOut(sandbox, 'campaign.send');
    const byModel = await call('campaign', 'campaign_action', { ...args, confirmationToken: token });
    expect(structuredOf(byModel as never).outcome).toBe('done');
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText('Done', { exact: true }).waitFor();
    await card.view.getByText(/already used for exactly this campaign\.send, and it was carried out at/).waitFor();
    expect(await card.view.getByText('Refused').count()).toBe(0);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(sendsBefore + 1);
  });

  it('a customer name or message with <script> or <img onerror> is shown as text and runs nothing', async () => {
    const ticket = sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
    const name = `<img src="data:," onerror="globalThis.__engageInjected='name'"><script>globalThis.__engageInjected='script'</script>Budi`;
    ticket.customerName = name;
    const message = `<img src=x onerror="globalThis.__engageInjected='message'">Terima kasih`;
    const card = await show('inbox', 'inbox_action', { operationId: 'inbox.ticket.reply', params: { ticketID: ticket.ticketID, message } });
    // Shown with their straight quotes escaped, as all quoted text is (review48).
    await card.view.getByText(name.replaceAll('"', '\\"'), { exact: false }).waitFor();
    await card.view.getByText(message.replaceAll('"', '\\"'), { exact: false }).waitFor();
    expect(await card.view.locator('#view img, #view script').count()).toBe(0);
    expect(await injectedFlag(card)).toBeUndefined();
    expect(await card.page.evaluate(() => (globalThis as Record<string, unknown>).__engageInjected)).toBeUndefined();

    // The check is live: the same text parsed as HTML makes the image, whose handler the view's own
    // policy (packages/apps/views/lock.ts, script-src 'none') then refuses: a second wall.
    const probed = await card.frame.evaluate(
      (html) =>
        new Promise<{ images: number; refused: string }>((resolve) => {
          const doc = (globalThis as unknown as { document: any }).document;
          const probe = doc.createElement('div');
          doc.addEventListener('securitypolicyviolation', (event: { effectiveDirective: string }) =>
            resolve({ images: probe.querySelectorAll('img').length, refused: event.effectiveDirective }),
          );
          probe.innerHTML = html;
          doc.body.append(probe);
        }),
      name,
    );
    expect(probed).toEqual({ images: 1, refused: 'script-src-attr' });
    expect(await injectedFlag(card)).toBeUndefined();
    card.networkRequests.length = 0; // the probe's own image, not the view's
  });
});

describe('the campaign dashboard', { timeout: 60_000 }, () => {
  it('shows a sending campaign’s progress climbing to 100%', async () => {
    const id = await draftCampaign('Dasbor');
    const preview = await call('campaign', 'campaign_action', { operationId: 'campaign.send', params: { id } });
    // The person said yes: the same call with the token, as the model makes it.
    const sent = await call('campaign', 'campaign_action', {
      operationId: 'campaign.send',
      params: { id },
      confirmationToken: structuredOf(preview as never).confirmationToken,
    });
    expect(structuredOf(sent as never).outcome).toBe('done');

    const dashboard = await show('campaign', 'campaign_read', { operationId: 'campaign.progress', params: { id } });
    const progressText = dashboard.view.locator('#progress-text');
    const seen: string[] = [];
    await expect
      .poll(
        async () => {
          const text = await progressText.textContent();
          if (text && seen.at(-1) !== text) seen.push(text);
          return text;
        },
        { timeout: 30_000, interval: 100 },
      )
      .toMatch(/^100% sent/);
    const percents = seen.map((text) => Number(/^(\d+)%/.exec(text)![1]));
    expect(percents[0]).toBeLessThan(100);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    const total = sandbox.tenant('A').campaigns.find((candidate) => candidate._id === id)!.totalRecipients;
    expect(seen.at(-1)).toBe(`100% sent · ${total} of ${total} recipients`);
    await expect.poll(() => dashboard.view.getByRole('progressbar').getAttribute('aria-valuenow'), WAIT_UNDER_LOAD).toBe('100');
    await dashboard.view.locator('.badge', { hasText: 'completed' }).waitFor();

    // Its refreshes were reads of this campaign's progress, and they stop once it is done.
    expect(dashboard.toolCalls.length).toBeGreaterThan(0);
    for (const toolCall of dashboard.toolCalls)
      expect(toolCall).toMatchObject({ name: 'campaign_read', arguments: { operationId: 'campaign.progress', params: { id } } });
    const callsWhenDone = dashboard.toolCalls.length;
    await dashboard.page.waitForTimeout(2_000);
    expect(dashboard.toolCalls.length).toBe(callsWhenDone);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBeGreaterThan(0);
  });

  it('shows analytics as a chart with every number also written out', async () => {
    const dashboard = await show('campaign', 'campaign_read', { operationId: 'campaign.analytics' });
    const data = structuredOf(dashboard.result as never).data as { sent: number; opened: number; failed: number };
    const caption = `Sent ${data.sent.toLocaleString('en-US')}, Opened ${data.opened.toLocaleString('en-US')}, Failed ${data.failed.toLocaleString('en-US')}`;
    await dashboard.view.getByRole('img', { name: caption }).waitFor();
    for (const [label, value] of [
      ['Sent', data.sent],
      ['Opened', data.opened],
      ['Failed', data.failed],
    ] as const) {
      await expect
        .poll(() => dashboard.view.locator('dl.counts div', { hasText: label }).locator('dd').textContent(), WAIT_UNDER_LOAD)
        .toBe(value.toLocaleString('en-US'));
    }
  });

  it('lists campaigns as a table, names as text, in the dark theme', async () => {
    const campaign = sandbox.tenant('A').campaigns[0]!;
    campaign.name = `<img src="data:," onerror="globalThis.__engageInjected='list'">Promo`;
    const dashboard = await show('campaign', 'campaign_read', { operationId: 'campaign.list', limit: 5 } as Args, 'dark');
    const page = structuredOf(dashboard.result as never).page as { returned: number };
    await expect.poll(() => dashboard.view.locator('tbody tr').count(), WAIT_UNDER_LOAD).toBe(page.returned);
    await dashboard.view.getByRole('cell', { name: campaign.name, exact: true }).waitFor();
    expect(await injectedFlag(dashboard)).toBeUndefined();
    expect(
      await dashboard.frame.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { dataset: { theme?: string } } } }).document.documentElement.dataset.theme,
      ),
    ).toBe('dark');

    // A row's button follows that campaign: a read of its progress, shown in the same view.
    await dashboard.view.getByRole('button', { name: `Show the progress of ${campaign.name}` }).click();
    await dashboard.view.locator('#progress-text').waitFor();
    expect(dashboard.toolCalls.at(-1)).toMatchObject({ name: 'campaign_read', arguments: { operationId: 'campaign.progress', params: { id: campaign._id } } });
  });
});
