// The journal's record of what was written (a campaign's text, which the API never shows back) was
// one list of 200 for all keys: in remote mode, one tenant's 200 writes on a domain pushed out
// every other tenant's, and another tenant's campaign.send preview then lost the text it was
// created with and said "this server did not create it" (review35-tenants). Each key now keeps its
// own 200; past a total size, the key holding the most gives up its own oldest.
import { describe, expect, it } from 'vitest';
import { WriteJournal } from '../shared/src/call/journal.js';

const created = (journal: WriteJournal, keyId: string) => journal.writtenWith(keyId)('campaign.create');

describe("the journal's record of writes, per key", () => {
  it("one tenant's 200 writes leave another tenant's record as it was", () => {
    const journal = new WriteJournal();
    journal.record('tenant-b', 'campaign.create', { name: 'Promo B', message: 'Hello from B' }, { _id: 'b1' });
    for (let index = 0; index < 200; index++) journal.record('tenant-a', 'campaign.create', { name: `A ${index}`, message: 'x' }, { _id: `a${index}` });
    expect(created(journal, 'tenant-b')).toEqual([{ params: { name: 'Promo B', message: 'Hello from B' }, data: { _id: 'b1' } }]);
    expect(created(journal, 'tenant-a')).toHaveLength(200);
  });

  it('a key keeps its own 200 newest', () => {
    const journal = new WriteJournal();
    for (let index = 0; index < 201; index++) journal.record('tenant-a', 'campaign.create', { name: `A ${index}` }, { _id: `a${index}` });
    const kept = created(journal, 'tenant-a');
    expect(kept).toHaveLength(200);
    expect(kept[0]?.data).toEqual({ _id: 'a200' });
    expect(kept.at(-1)?.data).toEqual({ _id: 'a1' });
  });

  it('past the total size, the key holding the most gives up its own oldest, not a small key', () => {
    const journal = new WriteJournal();
    journal.record('small', 'campaign.create', { name: 'kept', message: 'short' }, { _id: 's1' });
    // Many keys with entries near the 64 KiB limit each: together far past any sane total.
    const big = 'x'.repeat(60 * 1024);
    for (let key = 0; key < 40; key++)
      for (let index = 0; index < 20; index++)
        journal.record(`big-${key}`, 'campaign.create', { name: `${key}/${index}`, message: big }, { _id: `${key}-${index}` });
    expect(created(journal, 'small')).toHaveLength(1);
    const held = Array.from({ length: 40 }, (_, key) => created(journal, `big-${key}`).length);
    const total = held.reduce((sum, count) => sum + count, 0);
    expect(total).toBeLessThan(800);
    // What each big key kept is its newest.
    expect(created(journal, 'big-39')[0]?.data).toEqual({ _id: '39-19' });
  });
});
