// Review 28d (noticed by review 28a): a preview quotes the API's strings, and the card and the
// question isolate each quoted text, so right-to-left letters in it are ordered on their own. A
// value that is not a string (a list, an object: a hostile API's status or channel) was shown as
// its JSON unquoted, so nothing isolated it. Its own brackets isolate it only when they pair
// around the right-to-left letters (the bidi algorithm's bracket pairs); a `]` inside a string, or
// a JSON cut at 100 characters, undoes that. Attacked: a campaign whose status is ["x]שלום"], with
// 12 recipients. Found: on the confirmation card for campaign.send, drawn by Debian's Chromium from
// the built campaign server's preview, the line "status ["x]שלום"], 12 recipient(s)" drew the
// count 12 left of the Hebrew, inside the status, where it reads as part of the status (and the
// host's question from the same statement had no isolate there either). Now every value
// from the API that is not a plain word or number is quoted like a string, so the card and the
// question isolate it and the count stays where it goes.
import { describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { countOf, plain } from '../shared/src/model/catalog.js';
import { isolateRightToLeft } from '../shared/src/safe/sanitize.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

type Rect = { left: number; right: number; top: number };
/** Where `text` (the first occurrence in the fact that holds `within`) is drawn: its boxes' left and right edges, in the frame. */
function positionOf(view: HostedView, within: string, text: string): Promise<Rect> {
  return view.frame.evaluate(
    ([line, wanted]) => {
      // Runs in the page (the root tsconfig has no DOM types).
      type TextNode = { textContent: string | null };
      type Box = { left: number; right: number; top: number };
      type Doc = {
        querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }>;
        createTreeWalker(root: unknown, show: number): { nextNode(): TextNode | null };
        createRange(): { setStart(node: TextNode, at: number): void; setEnd(node: TextNode, at: number): void; getClientRects(): ArrayLike<Box> };
      };
      const doc = (globalThis as unknown as { document: Doc }).document;
      const item = Array.from(doc.querySelectorAll('ul.facts li')).find((li) => (li.textContent ?? '').includes(line as string));
      if (!item) throw new Error(`no fact holds ${line}`);
      const walker = doc.createTreeWalker(item, 4 /* NodeFilter.SHOW_TEXT */);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = (node.textContent ?? '').indexOf(wanted as string);
        if (at < 0) continue;
        const range = doc.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + (wanted as string).length);
        // Drawn boxes only: a range can also give an empty one where a line or an isolate begins.
        const boxes = Array.from(range.getClientRects()).filter((box) => box.right > box.left);
        return { left: Math.min(...boxes.map((box) => box.left)), right: Math.max(...boxes.map((box) => box.right)), top: boxes[0]!.top };
      }
      throw new Error(`${wanted} is not shown`);
    },
    [within, text],
  );
}

describe('review28d: a status given as a list, with right-to-left letters', { timeout: 60_000 }, () => {
  it('on the card, does not pull the recipient count into the status', async () => {
    const campaign = sandbox.tenant('A').campaigns[0] as unknown as Record<string, unknown>;
    campaign.name = 'Promo';
    campaign.channel = 'whatsapp';
    campaign.status = ['x]שלום'];
    campaign.totalRecipients = 12;
    const card = await showToolCall(browser, server.client as never, 'campaign_action', { operationId: 'campaign.send', params: { id: campaign._id } });
    hosted.push(card);
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    const [status, hebrew, count] = await Promise.all([
      positionOf(card, 'Campaign:', 'status'),
      positionOf(card, 'Campaign:', 'שלום'),
      positionOf(card, 'Campaign:', '12'),
    ]);
    // Read left to right: "status", the status's letters, then the count on their line.
    expect(count.top).toBe(hebrew.top);
    expect(hebrew.left).toBeGreaterThan(status.right);
    expect(count.left).toBeGreaterThan(hebrew.right);
  });

  it('in the question, is isolated as a quoted string is', () => {
    const line = `Campaign: “Promo” on whatsapp, status ${plain(['x]שלום'])}, ${countOf(12, 'recipient(s)')}`;
    expect(isolateRightToLeft(line)).toBe('Campaign: “Promo” on whatsapp, status “\u2068["x]שלום"]\u2069”, 12 recipient(s)');
    expect(isolateRightToLeft(`? ${countOf({ n: 'שלום' }, 'recipient(s)').slice(2)}`)).toContain('“\u2068{"n":"שלום"}\u2069”');
  });
});
