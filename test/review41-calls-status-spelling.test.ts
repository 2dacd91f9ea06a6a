// Review 41 (calls): inbox.ticket.byStatus now tells the model to spell the status as
// inbox.ticket.list shows it (review39: the spec gives no statuses). A status the list spells with
// a space ("on hold") was refused as if it were no id ('must be a plain id: no spaces…'), so the
// model could not ask for the very status it was told to copy. It is sent, encoded, now.
import { describe, expect, it } from 'vitest';
import { textOf } from './helpers.js';
import { envelope, hostileApiPerFile } from './hostile-api.js';

const stand = hostileApiPerFile();

describe('review41: a ticket status spelt with a space', () => {
  it('is sent encoded in the path, and separators are still refused', async () => {
    const server = await stand.serve('inbox');
    stand.api.respond(() => envelope([{ ticketID: 'TCK-1', customerName: 'Budi', status: 'on hold' }]));
    const held = await server.call('inbox.ticket.byStatus', { status: 'on hold' });
    expect(held.isError, textOf(held)).toBeFalsy();
    expect(stand.api.requests.map((request) => request.path)).toEqual(['/api/ai/v1/tickets/status/on%20hold']);
    const slash = await server.call('inbox.ticket.byStatus', { status: 'on/hold' });
    expect(slash.isError).toBe(true);
    expect(stand.api.requests).toHaveLength(1);
  });
});
