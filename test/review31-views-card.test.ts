// review31: the confirmation card used with the keyboard only, in Debian's Chromium through the
// test host (packages/apps/host), the built campaign server and the sandbox behind it.
// - Confirm pressed (Enter) on a preview whose facts changed since it was drawn: the server refuses
//   the token, nothing runs, and the card draws the new preview with the server's reason. The
//   button the person pressed was gone, so keyboard focus fell to the document's body and nothing
//   was announced: "Sending…" went quiet, as after a send. Focus goes to the reason now, which is
//   announced (role=alert), and the next Tab reaches the new Confirm after the new statement.
// - A preview result whose structuredContent carries the token but not the statement (a host that
//   drops or trims a large field): the card offered Confirm under "Nothing has been done yet." with
//   no statement at all, a yes to something the person was never shown. Without a statement the
//   card shows the server's text as it came, and no Confirm.
// - Confirm pressed and no answer came back (the host's call failed): the card said "Outcome
//   unknown", but the model was told nothing, so it still took the card as waiting for a yes, and
//   could ask the person again or use the token it read. It is told now that the person confirmed
//   and that the outcome is unknown.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { hostView, showToolCall, type CallToolResult } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

async function newCampaign(name: string): Promise<string> {
  const created = await server.client.callTool({
    name: 'campaign_action',
    arguments: { operationId: 'campaign.create', params: { name, message: 'Halo!', channel: 'whatsapp' } },
  });
  expect(created.isError, textOf(created as never)).toBeFalsy();
  return (structuredOf(created as never).data as { _id: string })._id;
}

/** The element that has keyboard focus in the view: its tag, role and text. */
function focused(frame: import('playwright-core').Frame): Promise<{ tag: string; role: string | null; text: string }> {
  return frame.evaluate(() => {
    const active = (
      globalThis as unknown as { document: { activeElement: { tagName: string; textContent: string | null; getAttribute(name: string): string | null } } }
    ).document.activeElement;
    return { tag: active.tagName, role: active.getAttribute('role'), text: active.textContent ?? '' };
  });
}

describe('review31: a refused token, with the keyboard only', { timeout: 60_000 }, () => {
  it('focus goes to the server’s reason, announced, and Tab then reaches the new Confirm', async () => {
    const id = await newCampaign('Hanya papan ketik');
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id } });
    hosted.push(card);
    const confirm = card.view.getByRole('button', { name: 'Confirm' });
    await confirm.waitFor();
    sandbox.tenant('A').campaigns.find((campaign) => campaign._id === id)!.totalRecipients += 3;
    const before = countCarriedOut(sandbox, 'campaign.send');

    await confirm.focus();
    await card.page.keyboard.press('Enter');
    await card.view.getByText(/has changed since/).waitFor({ timeout: 10_000 });
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(before);
    const reason = await focused(card.frame);
    expect(reason.tag).not.toBe('BODY');
    expect(reason.text).toMatch(/^What the earlier preview showed has changed since/);
    expect(reason.role).toBe('alert');

    await card.page.keyboard.press('Tab');
    expect(await focused(card.frame)).toMatchObject({ tag: 'BUTTON', text: 'Confirm' });
  });
});

describe('review31: a preview without its statement', { timeout: 60_000 }, () => {
  it('offers no Confirm, and shows the server’s text instead', async () => {
    const args = { operationId: 'campaign.send', params: { id: await newCampaign('Tanpa pernyataan') } };
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const { preview: statement, ...withoutStatement } = structuredOf(preview as never);
    expect(typeof statement).toBe('string');
    expect(withoutStatement.confirmationToken).toEqual(expect.any(String));
    const { tools } = await server.client.listTools();
    const [content] = (await server.client.readResource({ uri: 'ui://engage/confirm' })).contents;
    const card = await hostView(browser, {
      html: (content as { text: string }).text,
      tool: tools.find((tool) => tool.name === 'campaign_action') as never,
      toolInput: args,
      toolResult: { ...preview, structuredContent: withoutStatement },
      callTool: ({ name, arguments: toolArgs }) => server.client.callTool({ name, arguments: toolArgs }),
    });
    hosted.push(card);
    // Drawn: the server's text, or (before) a card with its buttons.
    await card.view
      .getByText(/has NOT been run/)
      .or(card.view.getByRole('button', { name: 'Cancel' }))
      .first()
      .waitFor();
    expect(await card.view.getByRole('button', { name: 'Confirm' }).count()).toBe(0);
    await card.view.getByText(/Campaign: “Tanpa pernyataan”/).waitFor();
    expect(card.toolCalls).toEqual([]);
  });
});

describe('review31: Confirm pressed and no answer came back', { timeout: 60_000 }, () => {
  it('the model is told the person confirmed and the outcome is unknown', async () => {
    const args = { operationId: 'campaign.send', params: { id: await newCampaign('Tanpa jawaban') } };
    const preview = (await server.client.callTool({ name: 'campaign_action', arguments: args })) as CallToolResult;
    const { tools } = await server.client.listTools();
    const [content] = (await server.client.readResource({ uri: 'ui://engage/confirm' })).contents;
    const card = await hostView(browser, {
      html: (content as { text: string }).text,
      tool: tools.find((tool) => tool.name === 'campaign_action') as never,
      toolInput: args,
      toolResult: preview,
      // The host's call fails on its way (a dropped connection): whether it ran is not known.
      callTool: async () => {
        throw new Error('connection reset');
      },
    });
    hosted.push(card);
    await card.view.getByRole('button', { name: 'Confirm' }).click();
    await card.view.getByText('Outcome unknown').waitFor();
    await expect.poll(async () => JSON.stringify(await card.modelContext())).toContain('The user confirmed campaign.send');
    expect(JSON.stringify(await card.modelContext())).toMatch(/may or may not have been carried out/);
  });
});
