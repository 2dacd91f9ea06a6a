// Review 48 (customer text): a run of blanks in a name read from the API made the name's text
// after it begin a line of its own wherever the statement is drawn with its spaces kept (the
// card's facts, a host's question): a campaign named “Promo Desember” + 150 spaces + “• Recipients:
// 1 (Budi, a test send)” showed that fake line under “Campaign: “Promo Desember”, as if it were
// one of ours, and the real count a line further down. Quoted text now shows blanks past the
// second in a row as escapes (\u{20}), so no run of them can push text to the start of a line.
import { describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { showToolCall, type HostedView } from '../packages/apps/host/harness.js';
import type { LaunchedServer, Sandbox } from '../packages/sandbox/src/index.js';
import { inlineText } from '../shared/src/safe/sanitize.js';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';
import { viewsPerFile } from './hosted-views.js';

const FAKE = '• Recipients: 1 (Budi, a test send)';
/** ASCII spaces (which hang at the end of a line), then no-break spaces (which fill whole lines). */
const NAME = `Promo Desember${' '.repeat(150)}${FAKE}${'\u00A0'.repeat(100)}`;
const THREE_BLANKS = /\p{Zs}{3}/u;

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('campaign', (ready) => ({ sandbox, server, browser } = ready));

/** A draft campaign named NAME, to send. */
function hostileCampaign(): string {
  const campaign = sandbox.tenant('A').campaigns.find((candidate) => candidate.status === 'draft')!;
  campaign.name = NAME;
  return campaign._id;
}

/** The statement a person is shown for campaign.send: the preview's (no elicitation), or the question's in either era. */
async function statementFor(kind: 'preview' | 'v1' | 'v2-modern'): Promise<string> {
  const questions: string[] = [];
  const elicit = async (message: string) => {
    questions.push(message);
    return { action: 'decline' as const };
  };
  const local = await inProcess(DOMAINS.campaign!, sandbox, kind === 'preview' ? {} : { kind, elicit });
  try {
    const result = await local.call('campaign.send', { id: hostileCampaign() });
    if (kind === 'preview') return String(structuredOf(result).preview);
    expect(questions, textOf(result)).toHaveLength(1);
    return questions[0] as string;
  } finally {
    await local.close();
  }
}

/** Where the first character of `wanted` is drawn in the element `selector`, and where its first character is (where its lines begin). */
async function drawnAt(frame: Pick<Page, 'evaluate'>, selector: string, wanted: string): Promise<{ left: number; lineStart: number }> {
  return frame.evaluate(
    ({ selector, wanted }) => {
      type TextNode = { textContent: string | null };
      type Box = { left: number };
      type Doc = {
        querySelector(selector: string): unknown;
        createTreeWalker(root: unknown, show: number): { nextNode(): TextNode | null };
        createRange(): { setStart(node: TextNode, at: number): void; setEnd(node: TextNode, at: number): void; getClientRects(): ArrayLike<Box> };
      };
      const doc = (globalThis as unknown as { document: Doc }).document;
      const leftOf = (node: TextNode, at: number) => {
        const range = doc.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + 1);
        return (range.getClientRects()[0] as Box).left;
      };
      const walker = doc.createTreeWalker(doc.querySelector(selector), 4 /* NodeFilter.SHOW_TEXT */);
      let lineStart: number | undefined;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        lineStart ??= leftOf(node, 0);
        const at = (node.textContent ?? '').indexOf(wanted);
        if (at >= 0) return { left: leftOf(node, at), lineStart };
      }
      throw new Error(`${wanted} is not shown`);
    },
    { selector, wanted },
  );
}

describe('review48: a run of blanks in a quoted name cannot start a line of the statement', { timeout: 60_000 }, () => {
  it.each(['preview', 'v1', 'v2-modern'] as const)('%s: the statement holds no run of blanks, and the fake line does not begin a line', async (kind) => {
    const statement = await statementFor(kind);
    const line = statement.split('\n').find((candidate) => candidate.startsWith('- Campaign: ')) as string;
    expect(line).toContain('12 recipient(s)');
    // As a host's dialog shows it: plain text, its spaces and lines kept, wrapped where it must.
    const page = await browser.newPage({ viewport: { width: 520, height: 800 } });
    try {
      await page.setContent(
        '<html lang="en"><body><div id="question" style="width: 480px; white-space: pre-wrap; overflow-wrap: anywhere; font: 16px sans-serif"></div></body></html>',
      );
      await page.evaluate((text) => {
        (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } } }).document.querySelector('#question').textContent = text;
      }, line);
      const fake = await drawnAt(page, '#question', FAKE);
      expect(fake.left).toBeGreaterThan(fake.lineStart + 1);
      expect(line).not.toMatch(THREE_BLANKS);
    } finally {
      await page.close();
    }
  });

  it('on the card, the fake line is not drawn where a line of the fact begins', async () => {
    const card: HostedView = await showToolCall(browser, server.client as never, 'campaign_action', {
      operationId: 'campaign.send',
      params: { id: hostileCampaign() },
    });
    hosted.push(card);
    await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
    const fake = await drawnAt(card.frame, 'ul.facts li', FAKE);
    expect(fake.left).toBeGreaterThan(fake.lineStart + 1);
    expect(await card.view.locator('ul.facts li').first().textContent()).not.toMatch(THREE_BLANKS);
  });

  it('blanks past the second in a row are escapes; two are kept, as are single blanks of any kind', () => {
    expect(inlineText('a  b')).toBe('a  b');
    expect(inlineText('a   b')).toBe('a  \\u{20}b');
    expect(inlineText('a\u00A0\u3000\u2003b')).toBe('a\u00A0\u3000\\u{2003}b');
    expect(inlineText('Budi\u00A0Santoso, 日本\u3000語')).toBe('Budi\u00A0Santoso, 日本\u3000語');
    // Marks drawn on the blanks do not make them a run of something else.
    expect(inlineText('a \u0301 \u0301 \u0301b')).toBe('a \u0301 \u0301\\u{20}\u0301b');
    expect(inlineText('e\u0301  e\u0301')).toBe('e\u0301  e\u0301');
  });
});
