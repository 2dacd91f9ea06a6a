// Review 35 (the model's eye). "Close all open tickets older than a week": a model searched
// inbox.ticket.list for `lastMessageAt<2026-11-22` (or `status=open`), which the search looks for as
// text; the answer said "no records" and nothing more, and the model told the person no ticket was
// older than a week, though all were. Now a word written as a comparison is named back, with the
// one form that names a field and what to do instead.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { structuredOf, textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('inbox');

const search = async (words: string) => (await file.server.call('inbox.ticket.list', undefined, { search: words })) as CallToolResult;
const NO_COMPARISONS = /The search has no comparisons: /;

describe('review35: a search word written as a comparison', () => {
  it('lastMessageAt<date: said to be looked for as text, and what to do instead', async () => {
    const result = await search('lastMessageAt<2026-11-22');
    expect(textOf(result)).toContain(
      'The search has no comparisons: the word beginning "lastMessageAt<" was looked for as text, not compared, so this page is not what it asked for. field:value is the one form that names a field (equals); to compare dates or numbers, read the list without such a word and compare the values yourself.',
    );
    expect(structuredOf(result).notes).toEqual(expect.arrayContaining([expect.stringMatching(NO_COMPARISONS)]));
  });

  it('status=open and unread>0 together: both named', async () => {
    expect(textOf(await search('status=open unread>0'))).toContain('the words beginning "status=", "unread>" were looked for as text');
  });

  it.each(['status:open', 'Bayu', 'TCK-1002'])('%s: no such note', async (words) => {
    expect(textOf(await search(words))).not.toMatch(NO_COMPARISONS);
  });
});
