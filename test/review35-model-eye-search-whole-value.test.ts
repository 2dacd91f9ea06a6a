// Review 35 (the model's eye). "Has Bayu Nasution written to us?": a model searched
// inbox.ticket.list for `customerName:Bayu Nasution` (or with quotes, or `customerName:bayu`, or
// `lastMessageAt:2026-08-27`); a field:value word equals a whole value and a space ends it, so
// nothing matched, the answer said only "no records", and the model told the person there was no
// such ticket. Now a search with a field:value word that matches nothing, in a list with records,
// says how such a word matches and how to find part of a value.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('inbox');

const search = async (words: string) => textOf((await file.server.call('inbox.ticket.list', undefined, { search: words })) as CallToolResult);
const WHOLE_VALUE =
  /A field:value word matches only a field whose whole value is that word \(case aside\): .* To find part of a value, search for that part as a word of its own\./;

describe('review35: a field:value search that matches nothing', () => {
  it('a full name, the name quoted, a part of it, a date without its time: each says how a field:value word matches', async () => {
    const ticket = file.sandbox.tenant('A').tickets[0]!;
    const [first, last] = String(ticket.customerName).split(' ') as [string, string];
    const cases = [
      `customerName:${first} ${last}`,
      `customerName:"${first} ${last}"`,
      `customerName:${first.toLowerCase()}`,
      `lastMessageAt:${String(ticket.lastMessageAt).slice(0, 10)}`,
    ];
    for (const words of cases) {
      const text = await search(words);
      expect(text, words).toMatch(/no records: none of the \d+ matches the filter/);
      expect(text, words).toMatch(WHOLE_VALUE);
    }
  });

  it('a search that finds records, names a field no record has, or has no field:value word: no such note', async () => {
    const ticket = file.sandbox.tenant('A').tickets[0]!;
    expect(await search(`ticketID:${String(ticket.ticketID)}`)).not.toMatch(WHOLE_VALUE);
    expect(await search('tag:vip')).not.toMatch(WHOLE_VALUE);
    expect(await search('nobody-has-this-word')).not.toMatch(WHOLE_VALUE);
  });
});
