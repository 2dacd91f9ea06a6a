// review22 (stop 33-34's "noticed, left alone"): review13 found that right-to-left letters in a
// customer's name reorder what is around the name's quotes, and isolated them on the card (<bdi>).
// The question a host shows a person (2025 elicitation/create, 2026-07-28 input_required) is
// plain text, and was not: a customer named `שלום 12 (6289999)` made "“<name>” (<real number>) on
// whatsapp" draw the real number inside the quotes and the made-up one where the number goes.
// Each quoted text holding right-to-left letters is isolated (U+2068 … U+2069) in the question now;
// the model's copy (the preview's text) is left without invisible characters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../packages/apps/host/harness.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { isolateRightToLeft } from '../shared/src/safe/sanitize.js';
import type { ClientKind } from './helpers.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

const NAME = 'שלום 12 (6289999)';
let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => browser?.close());

/** The question the host is asked to show for a reply to a ticket whose customer has NAME, and the ticket's real number. */
async function questionFor(kind: ClientKind): Promise<{ question: string; real: string; preview?: string }> {
  const questions: string[] = [];
  const server = await serve('inbox.ticket.reply', {
    kind,
    elicit: async (message) => {
      questions.push(message);
      return { action: 'decline' };
    },
  });
  const ticket = sandbox.tenant('A').tickets.find((candidate) => candidate.status === 'open')!;
  ticket.customerName = NAME;
  const result = await server.call('inbox.ticket.reply', { ticketID: ticket.ticketID, message: 'Terima kasih' });
  expect(questions, textOf(result)).toHaveLength(1);
  return { question: questions[0] as string, real: `(${ticket.msisdn})` };
}

/** Where the first `text` on the page is drawn, shown as a host shows a question: plain text, its lines kept. */
async function positionOf(page: Page, text: string): Promise<{ left: number; top: number }> {
  return page.evaluate((wanted) => {
    type TextNode = { textContent: string | null };
    type Doc = {
      querySelector(selector: string): unknown;
      createTreeWalker(root: unknown, show: number): { nextNode(): TextNode | null };
      createRange(): {
        setStart(node: TextNode, at: number): void;
        setEnd(node: TextNode, at: number): void;
        getClientRects(): ArrayLike<{ left: number; top: number }>;
      };
    };
    const doc = (globalThis as unknown as { document: Doc }).document;
    const walker = doc.createTreeWalker(doc.querySelector('#question'), 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = (node.textContent ?? '').indexOf(wanted);
      if (at < 0) continue;
      const range = doc.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + wanted.length);
      const box = range.getClientRects()[0] as { left: number; top: number };
      return { left: box.left, top: box.top };
    }
    throw new Error(`${wanted} is not shown`);
  }, text);
}

describe('review22: right-to-left letters in a quoted name, in the question a person is shown', { timeout: 60_000 }, () => {
  it.each(['v1', 'v2-modern'] as const)('%s: the real number stays after the name’s quotes, where a person reads it', async (kind) => {
    const { question, real } = await questionFor(kind);
    const line = question.split('\n').find((candidate) => candidate.includes(real)) as string;
    expect(line).toContain(`“\u2068${NAME}\u2069” ${real}`);
    const page = await browser.newPage();
    try {
      // As a host's dialog shows it: the text, its lines kept, in a page whose direction is left to right.
      await page.setContent('<html lang="en"><body><div id="question" style="white-space: pre-wrap; font: 16px sans-serif"></div></body></html>');
      await page.evaluate((text) => {
        (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } } }).document.querySelector('#question').textContent = text;
      }, line);
      const [closing, number] = await Promise.all([positionOf(page, '”'), positionOf(page, real)]);
      expect(number.top).toBe(closing.top);
      expect(number.left).toBeGreaterThan(closing.left);
    } finally {
      await page.close();
    }
  });

  it('only quoted texts with right-to-left letters are isolated, and escapes stay inside their quotes', () => {
    expect(isolateRightToLeft('Ticket 1: “Budi” (62812) on whatsapp')).toBe('Ticket 1: “Budi” (62812) on whatsapp');
    expect(isolateRightToLeft('“Budi” and “שלום \\” 12”')).toBe('“Budi” and “\u2068שלום \\” 12\u2069”');
    expect(isolateRightToLeft('“مرحبا”\n“x”')).toBe('“\u2068مرحبا\u2069”\n“x”');
  });
});
