// The write journal keeps a bounded number of attempts per key (5,000) and in all (100,000), the
// oldest forgotten first. A write in flight was forgotten like any other once a busy key's later
// writes pushed it out; for a write that needs no yes the journal is what refuses the same write
// while it is at the API, so a repeat then went out a second time. An attempt in flight is now
// never forgotten for room: the bound counts the ones that ended (those in flight are as many as
// the writes at the API at once).
import { expect, it } from 'vitest';
import { WriteJournal } from '../shared/src/call/journal.js';

const params = (n: number) => ({ msisdn: '081234567890', message: `message ${n}` });

it('a write still in flight is remembered after 6,000 later writes of the same key, and after 110,000 of other keys', () => {
  const journal = new WriteJournal();
  journal.attempt('busy', 'channel.whatsapp.send', params(0), 'in-flight');
  for (let n = 1; n <= 6_000; n++) {
    journal.attempt('busy', 'channel.whatsapp.send', params(n), 'in-flight');
    journal.attempt('busy', 'channel.whatsapp.send', params(n), 'done');
  }
  expect(journal.lastSent('busy', 'channel.whatsapp.send', params(0))?.outcome).toBe('in-flight');
  // The bound still holds for the ones that ended: the oldest of them went.
  expect(journal.lastSent('busy', 'channel.whatsapp.send', params(1))).toBeUndefined();
  expect(journal.lastSent('busy', 'channel.whatsapp.send', params(6_000))?.outcome).toBe('done');
  for (let n = 1; n <= 110_000; n++) journal.attempt(`key ${n % 50}`, 'channel.whatsapp.send', params(n), 'done');
  expect(journal.lastSent('busy', 'channel.whatsapp.send', params(0))?.outcome).toBe('in-flight');
});
