// review40: right-to-left text in the fields a statement lists as JSON ("It also sends these fields,
// exactly as given: tags = ["שלום",12]."), in Debian's Chromium through the test host
// (packages/apps/host), the built product server (every write confirmed) and the sandbox behind it.
// The card isolated text in “curly quotes” (review13) but not the JSON's "straight" strings: the
// number after a Hebrew string took its direction and was drawn before it, and the person read
// tags = [12,"שלום"], a list in the other order from the one that is sent. Each JSON string is
// isolated now, so the line reads in the order it is sent; so is the JSON of the API's answer,
// folded under the outcome ("tags":["שלום",12] was drawn "tags":[12,"שלום"] there too).
import { describe, expect, it } from 'vitest';
import type { Browser, Frame } from 'playwright-core';
import { showToolCall } from '../packages/apps/host/harness.js';
import { launchServer, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { viewsPerFile } from './hosted-views.js';

let sandbox: Sandbox;
let browser: Browser;
let server: LaunchedServer;
const hosted = viewsPerFile('product', (ready) => ({ sandbox, browser } = ready));

/** Where, from the left, the statement draws the first `first` and the first `second` after it (their text order). */
function drawnAt(frame: Frame, first: string, second: string, selector = 'p.statement'): Promise<{ first: number; second: number }> {
  return frame.evaluate(
    ([a, b, where]: string[]) => {
      const doc = (globalThis as unknown as { document: any }).document;
      const statement = doc.querySelector(where);
      const text: string = statement.textContent;
      const at = (needle: string, from: number) => {
        const offset = text.indexOf(needle, from);
        // The text node and offset that hold `offset` of the statement's text.
        const walker = doc.createTreeWalker(statement, 4);
        let seen = 0;
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const length = node.textContent.length;
          if (offset < seen + length) {
            const range = doc.createRange();
            range.setStart(node, offset - seen);
            range.setEnd(node, offset - seen + 1);
            return { offset, x: range.getBoundingClientRect().x as number };
          }
          seen += length;
        }
        throw new Error(`${needle} is not in the statement`);
      };
      const firstAt = at(a as string, 0);
      return { first: firstAt.x, second: at(b as string, firstAt.offset + (a as string).length).x };
    },
    [first, second, selector],
  );
}

describe('review40: right-to-left text in a field sent as JSON', { timeout: 60_000 }, () => {
  it('is drawn before the number that follows it, as it is sent', async () => {
    server = await launchServer('product', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'all' });
    try {
      const args = { operationId: 'product.create', params: { name: 'Batik', price: 1000, tags: ['שלום', 12] } };
      const card = await showToolCall(browser, server.client as never, 'product_action', args);
      hosted.push(card);
      expect(card.result.structuredContent?.preview).toContain('tags = ["שלום",12]');
      await card.view.getByRole('button', { name: 'Confirm' }).waitFor();
      const drawn = await drawnAt(card.frame, 'ש', '12');
      expect(drawn.first).toBeLessThan(drawn.second);

      // The API's answer, folded under the outcome, is JSON too.
      await card.view.getByRole('button', { name: 'Confirm' }).click();
      await card.view.getByText('What the API answered').click();
      const answered = await drawnAt(card.frame, 'ש', '12', 'details p.statement');
      expect(answered.first).toBeLessThan(answered.second);
    } finally {
      await server.close();
    }
  });
});
