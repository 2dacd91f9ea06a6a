// review13: the server escapes invisible and direction-control characters in the text it quotes,
// but right-to-left letters are neither: they are text, and the browser's bidi algorithm orders
// what is around them. A customer whose name is `שלום 12 (6289999)` (no control character at all)
// made the card's line "Ticket …: “<name>” (<real number>) on whatsapp" read
// `“(6281250065672) ”(6289999) 12 שלום on whatsapp`: the real number drawn inside the quotes, a
// made-up one where the number goes. The card now isolates each quoted text (<bdi>), so what is
// quoted is ordered on its own and cannot move what is around it.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('inbox', (ready) => ({ sandbox, server, browser } = ready));

type Rect = { left: number; top: number };
/** Where the first occurrence of `text` inside the view's `li` is drawn (its first box), in the frame's coordinates. */
function positionOf(view: HostedView, text: string): Promise<Rect> {
  return view.frame.evaluate((wanted) => {
    // Runs in the page (the root tsconfig has no DOM types).
    type TextNode = { textContent: string | null };
    type Doc = {
      querySelector(selector: string): unknown;
      createTreeWalker(root: unknown, show: number): { nextNode(): TextNode | null };
      createRange(): { setStart(node: TextNode, at: number): void; setEnd(node: TextNode, at: number): void; getClientRects(): ArrayLike<Rect> };
    };
    const doc = (globalThis as unknown as { document: Doc }).document;
    const walker = doc.createTreeWalker(doc.querySelector('ul.facts li'), 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = (node.textContent ?? '').indexOf(wanted);
      if (at < 0) continue;
      const range = doc.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + wanted.length);
      const box = range.getClientRects()[0] as Rect;
      return { left: box.left, top: box.top };
    }
    throw new Error(`${wanted} is not shown`);
  }, text);
}

describe('review13: right-to-left letters in a customer name on the card', { timeout: 60_000 }, () => {
  it('do not move the ticket’s real number inside the name’s quotes', async () => {
    const ticket = sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
    ticket.customerName = 'שלום 12 (6289999)';
    const args = { operationId: 'inbox.ticket.reply', params: { ticketID: ticket.ticketID, message: 'Terima kasih' } };
    const card = await showToolCall(browser, server.client as never, 'inbox_action', args);
    hosted.push(card);
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    const real = `(${ticket.msisdn})`;
    const [closing, number, on] = await Promise.all([positionOf(card, '”'), positionOf(card, real), positionOf(card, ' on whatsapp')]);
    // Read left to right on one line: the closing quote, then the real number, then the channel.
    expect(number.top).toBe(closing.top);
    expect(number.left).toBeGreaterThan(closing.left);
    expect(on.left).toBeGreaterThan(number.left);
  });
});
