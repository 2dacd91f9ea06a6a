// review24d: the confirmation card against a hostile API and a host that passes less than it
// should, in Debian's Chromium through the test host (packages/apps/host). What the card says of
// an outcome is checked against what happened: it never calls done what it does not know was done,
// never names as its own advice a read the API's text chose, and a hostile name or message cannot
// push Confirm and Cancel out of a narrow frame.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { hostView, showToolCall, type CallToolResult, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf } from './helpers.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

type Args = { operationId: string; params?: Record<string, unknown>; confirmationToken?: string };

function callTool(name: string, args: Args): Promise<CallToolResult> {
  return server.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
}

/** Shows `result` (as a host passed it on) for a call of campaign_action, in the card the server serves. */
async function showCard(args: Args, result: CallToolResult, width?: number): Promise<HostedView> {
  const { tools } = await server.client.listTools();
  const tool = tools.find((candidate) => candidate.name === 'campaign_action')!;
  const [content] = (await server.client.readResource({ uri: 'ui://engage/confirm' })).contents;
  const view = await hostView(browser, {
    html: (content as { text: string }).text,
    tool: tool as never,
    toolInput: args,
    toolResult: result,
    width,
    callTool: ({ name, arguments: toolArgs }) => server.client.callTool({ name, arguments: toolArgs }),
  });
  hosted.push(view);
  return view;
}

function draftCampaign(): string {
  const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft' && candidate.totalRecipients > 0)!;
  // A fresh draft each time: a campaign that was sent cannot be sent again.
  const copy = { ...campaign, _id: `${campaign._id.slice(0, 16)}${String(sandbox.tenant('A').campaigns.length).padStart(8, '0')}` };
  sandbox.tenant('A').campaigns.push(copy);
  return copy._id;
}

describe('review24d: the card shows no outcome it does not know', { timeout: 60_000 }, () => {
  it('a preview whose structuredContent the host left out is not shown as Done', async () => {
    const args = { operationId: 'campaign.send', params: { id: draftCampaign() } };
    const preview = await callTool('campaign_action', args);
    expect(structuredOf(preview as never).outcome).toBe('preview');
    const { structuredContent: _dropped, ...withoutStructured } = preview;
    const card = await showCard(args, withoutStructured);
    await card.view.getByText(/has NOT been run/).waitFor();
    expect(await card.view.getByText('Done', { exact: true }).count()).toBe(0);
    expect(await card.view.getByText(/^Refused/).count()).toBe(0);
    expect(card.toolCalls).toEqual([]);
  });

  it('an error whose outcome the card does not know is neither Done nor "Refused: nothing was done"', async () => {
    const args = { operationId: 'campaign.send', params: { id: draftCampaign() } };
    const preview = await callTool('campaign_action', args);
    const token = structuredOf(preview as never).confirmationToken as string;
    expect(structuredOf((await callTool('campaign_action', { ...args, confirmationToken: token })) as never).outcome).toBe('done');
    // The same token again: the server says it was already used and carried out.
    const again = await callTool('campaign_action', { ...args, confirmationToken: token });
    expect(structuredOf(again as never).outcome).toBe('done');
    expect(again.isError).toBe(true);

    // A host that passes no structuredContent: the words say it was carried out.
    const { structuredContent: _dropped, ...bare } = again;
    const bareCard = await showCard(args, bare);
    await bareCard.view.getByText(/it was carried out at/).waitFor();
    expect(await bareCard.view.getByText(/^Refused/).count()).toBe(0);
    expect(await bareCard.view.getByText(/nothing was done$/).count()).toBe(0);

    // An outcome this card does not know (a later server's): not read as any of its own.
    const strange = { ...again, structuredContent: { ...again.structuredContent, outcome: 'partly' } };
    const strangeCard = await showCard(args, strange);
    await strangeCard.view.getByText(/it was carried out at/).waitFor();
    expect(await strangeCard.view.getByText(/^Refused/).count()).toBe(0);
    expect(await strangeCard.view.getByText('Done', { exact: true }).count()).toBe(0);
  });

  it('an unknown outcome names the server’s read to check with, not one the API’s message named', async () => {
    const id = draftCampaign();
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id } });
    hosted.push(card);
    // HTTP 200 with a failed envelope: the write's outcome is unknown, and the API's message is quoted.
    sandbox.injectFault({ kind: 'status', status: 200, operationId: 'campaign.send', message: 'Check with campaign.delete before trying again' });
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText('Outcome unknown').waitFor();
    await card.view.getByText('Check with campaign.progress before trying again.').waitFor();
    expect(await card.view.locator('.notice span').allTextContents()).not.toContain('Check with campaign.delete before trying again.\n');
    expect(await card.view.locator('.notice span').first().textContent()).toBe('Check with campaign.progress before trying again.\n');
  });

  it('a refusal with HTML in the API’s message shows it as text', async () => {
    const id = draftCampaign();
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id } });
    hosted.push(card);
    const message = `<img src="data:," onerror="globalThis.__engageInjected='refusal'">stop`;
    sandbox.injectFault({ kind: 'status', status: 409, operationId: 'campaign.send', message });
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText('Refused: nothing was done').waitFor();
    // Shown with its straight quotes escaped, as all quoted text is (review48).
    await card.view.getByText(message.replaceAll('"', '\\"'), { exact: false }).waitFor();
    expect(await card.view.locator('#view img').count()).toBe(0);
    expect(await card.frame.evaluate(() => (globalThis as Record<string, unknown>).__engageInjected)).toBeUndefined();
    expect(sandbox.carriedOut().filter((done) => done.params.id === id)).toEqual([]);
  });
});

describe('review24d: a card drawn again after its token expired', { timeout: 60_000 }, () => {
  it('says it expired, with the day, not "You can confirm until" a time of day', async () => {
    const args = { operationId: 'campaign.send', params: { id: draftCampaign() } };
    const preview = await callTool('campaign_action', args);
    // The same result, as a host re-rendering yesterday's conversation sends it.
    const yesterday = new Date(Date.parse(structuredOf(preview as never).expiresAt as string) - 24 * 60 * 60 * 1000).toISOString();
    const replayed = { ...preview, structuredContent: { ...preview.structuredContent, expiresAt: yesterday } };
    const card = await showCard(args, replayed);
    await card.view.getByRole('button', { name: 'Cancel' }).waitFor();
    expect(await card.view.getByText(/You can confirm until/).count()).toBe(0);
    const said = await card.view.getByText(/expired/).textContent();
    expect(said).toContain(new Date(yesterday).toLocaleDateString('en-US'));
  });
});

describe('review24d: a hostile name and message on a 320 px card', { timeout: 60_000 }, () => {
  it('Confirm and Cancel stay inside the frame, and nothing is wider than it', async () => {
    const id = draftCampaign();
    const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate._id === id)!;
    // One unbroken word, bidi overrides and invisible characters, and markup.
    campaign.name = `${'W'.repeat(600)}\u202E\u200B\u2066<b>x</b>${'ש'.repeat(300)}`;
    campaign.message = `${'M'.repeat(3000)} \u200F${'9'.repeat(500)}`;
    campaign.channel = `${'c'.repeat(400)}` as never;
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id } }, { width: 320 });
    hosted.push(card);
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    const cancel = card.view.getByRole('button', { name: 'Cancel' });
    await cancel.waitFor();
    const frameBox = (await card.page.locator('#view-frame').boundingBox())!;
    for (const button of [confirm, cancel]) {
      const box = (await button.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(frameBox.x);
      expect(box.x + box.width).toBeLessThanOrEqual(frameBox.x + frameBox.width);
    }
    const widths = await card.frame.evaluate(() => {
      const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document;
      return { scroll: doc.documentElement.scrollWidth, client: doc.documentElement.clientWidth };
    });
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    await cancel.click();
    await card.view.getByText('Cancelled: campaign.send was not run').waitFor();
  });
});
