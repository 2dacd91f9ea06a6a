// Review 40 (the model's eye). "Tell every customer with an open ticket about 'Batik Tulis'": a
// model searched the ticket list for "Batik Tulis", was answered "no records: none of the 5 matches
// the filter" and told the person no customer had asked, though TCK-1001's customer asks for batik
// tulis in its messages, which the list does not hold. Now a plain search that matches nothing says
// where it looked and that none matching there does not show that no record mentions it.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { structuredOf, textOf } from './helpers.js';
import { inProcessPerFile } from './helpers/in-process-per-file.js';

const file = inProcessPerFile('inbox');
const NOTE =
  "The search looked only in the fields this list gives each record; what a record holds beyond them (a ticket's messages, for one) was not searched, so that none matches here does not show that no record mentions it.";

describe('review40: a search that matches nothing in the fields a list gives', () => {
  it('says where it looked, while the ticket it missed holds the words in its messages', async () => {
    const none = (await file.server.call('inbox.ticket.list', {}, { search: 'Batik Tulis' })) as CallToolResult;
    expect(textOf(none)).toContain('no records: none of the 5 matches the filter');
    expect(structuredOf(none).notes).toContain(NOTE);
    const ticket = textOf((await file.server.call('inbox.ticket.get', { ticketID: 'TCK-1001' })) as CallToolResult);
    expect(ticket.toLowerCase()).toContain('batik tulis');
  });

  it('is not said where the search matched, where only field:value or comparison words were given', async () => {
    const found = (await file.server.call('inbox.ticket.list', {}, { search: 'Bayu' })) as CallToolResult;
    expect(textOf(found)).not.toContain(NOTE);
    for (const search of ['status:archived', 'unread>5']) {
      expect(textOf((await file.server.call('inbox.ticket.list', {}, { search })) as CallToolResult)).not.toContain(NOTE);
    }
  });
});
