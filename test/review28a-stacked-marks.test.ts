// Review 28a: combining marks are text (é written as e + U+0301 is ordinary), so cleaning keeps them
// and a quoted name keeps them too; but a browser stacks every mark on its base letter, as high or
// as deep as there are marks. Attacked: a ticket whose customer name is "Budi" with 280 marks
// stacked on its last letter (the name stays under the 300 characters a preview shows). Found: on
// the confirmation card, drawn by Debian's Chromium from the built inbox server's preview, the
// stack rose out of its line and was drawn over the statement above it: the reply text the person
// approves was painted over (and the question a host shows from the same statement has the same
// stack). Now a quoted text keeps at most 4 marks in a row on one letter (more than any script
// writes); the marks past that are written as escapes (\u{301}), like invisible characters, so
// the name is still shown whole and cannot draw outside its line.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('inbox', (ready) => ({ sandbox, server, browser } = ready));

/** 280 combining marks, above and below, cycling through U+0300–U+0333. */
const MARKS = Array.from({ length: 280 }, (_, index) => String.fromCodePoint(0x300 + (index % 0x34))).join('');
const REPLY = { message: 'Terima kasih, pesanan Anda dikirim hari ini.' };

function openTicket(customerName: string): string {
  const ticket = sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
  ticket.customerName = customerName;
  return ticket.ticketID;
}

/** The card for a reply to a ticket whose customer has `name`, and the pixels of its statement (the reply text the person approves). */
async function statementPixels(name: string): Promise<Buffer> {
  const args = { operationId: 'inbox.ticket.reply', params: { ticketID: openTicket(name), ...REPLY } };
  const card: HostedView = await showToolCall(browser, server.client as never, 'inbox_action', args);
  hosted.push(card);
  await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
  return card.view.locator('p.statement').screenshot({ animations: 'disabled' });
}

describe('review28a: combining marks stacked on a customer name', { timeout: 60_000 }, () => {
  it('on the card, are not drawn over the reply text the person approves', async () => {
    const plain = await statementPixels('Budi');
    const stacked = await statementPixels(`Budi${MARKS}`);
    expect(stacked.equals(plain)).toBe(true);
  });

  it('in the preview the model reads, are shown whole: the first 4 as they are, the rest as escapes', async () => {
    const ticketID = openTicket(`Budi${MARKS}`);
    const result = (await server.client.callTool({
      name: 'inbox_action',
      arguments: { operationId: 'inbox.ticket.reply', params: { ticketID, ...REPLY } },
    })) as CallToolResult;
    const statement = structuredOf(result).preview as string;
    expect(statement).not.toMatch(/\p{M}{5}/u);
    const shown = `Budi${MARKS.slice(0, 4)}${Array.from(MARKS.slice(4), (mark) => `\\u{${mark.codePointAt(0)!.toString(16).toUpperCase()}}`).join('')}`;
    expect(statement).toContain(`“${shown}”`);
    expect(textOf(result)).toContain(`“${shown}”`);
  });
});
