// review22c: the question's right-to-left isolation (isolateRightToLeft) pairs a “ with the next ”
// on its line, taking every “ … ” there for a quoted text that inlineText() escaped. A value read
// from the API that is not a string (an object, a list) was shown as its JSON, whose curly quotes
// were left as they were: the API's lone “ opened a span that ran over the statement's own words
// to the next quote's ”, and those words were put in an isolate whose direction the API's
// right-to-left letters set. Curly quotes in such JSON are escaped now, as in any quoted text.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { brief, plain } from '../shared/src/model/catalog.js';
import { isolateRightToLeft } from '../shared/src/safe/sanitize.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

/** Each isolate (U+2068 … U+2069) in `text`, as it is. */
const isolates = (text: string) => [...text.matchAll(/\u2068([^\u2069]*)\u2069/gu)].map((match) => match[1] as string);

describe('review22c: an isolate in the question holds only a quoted text', { timeout: 60_000 }, () => {
  it('the campaign.send question: the API’s lone “ in a non-text value does not take the statement’s words into an isolate', async () => {
    const questions: string[] = [];
    const server = await serve('campaign.send', {
      kind: 'v1',
      elicit: async (message) => {
        questions.push(message);
        return { action: 'decline' };
      },
    });
    const campaign = sandbox.tenant('A').campaigns[0] as unknown as Record<string, unknown>;
    campaign.channel = ['“שלום'];
    campaign.status = 'on hold';
    const result = await server.call('campaign.send', { id: campaign._id });
    expect(questions, textOf(result)).toHaveLength(1);
    const line = (questions[0] as string).split('\n').find((candidate) => candidate.includes('שלום')) as string;
    expect(line).toBeDefined();
    for (const inner of isolates(line)) expect(inner, line).not.toContain('status');
  });

  it('JSON of API data shows curly quotes escaped, as a quoted text does', () => {
    expect(brief(['“a', 'b”'])).toBe('["\\“a","b\\”"]');
    // Quoted as a whole (review28d), its own curly quotes still escaped: the isolate holds that value alone.
    expect(plain({ a: '”' })).toBe('“{"a":"\\”"}”');
    const line = `Campaign: “x” on ${plain(['“שלום'])}, status ${plain('on hold')}, 12 recipient(s).`;
    expect(isolates(isolateRightToLeft(line))).toEqual(['["\\“שלום"]']);
  });
});
