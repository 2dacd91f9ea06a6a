// The journal keeps at most 100,000 attempts that ended, in all: past it, the key with the most
// attempts gives up its oldest. An attempt in flight is never forgotten for room, so when that key
// held only attempts in flight (a tenant with two slow writes at the API, every other tenant with
// one attempt each), nothing was forgotten at all: the bound stopped holding, and the journal grew
// with every other tenant's write for as long as those two were out. Now another key's oldest ended
// attempt goes instead, and a key left with none is dropped.
import { expect, it } from 'vitest';
import { WriteJournal } from '../shared/src/call/journal.js';

const SEND = 'channel.whatsapp.send';
const params = (n: number) => ({ msisdn: '081234567890', message: `message ${n}` });

it('the total bound holds while the busiest key has only writes in flight', () => {
  const journal = new WriteJournal();
  journal.attempt('busy', SEND, params(-1), 'in-flight');
  journal.attempt('busy', SEND, params(-2), 'in-flight');
  const past = 1_000;
  for (let n = 1; n <= 100_000 + past; n++) journal.attempt(`tenant ${n}`, SEND, params(n), 'done');
  // The oldest ended attempts went, as many as passed the bound; the writes in flight stay.
  expect(journal.lastSent('tenant 1', SEND, params(1))).toBeUndefined();
  expect(journal.lastSent(`tenant ${past}`, SEND, params(past))).toBeUndefined();
  expect(journal.lastSent(`tenant ${past + 3}`, SEND, params(past + 3))?.outcome).toBe('done');
  expect(journal.lastSent('busy', SEND, params(-1))?.outcome).toBe('in-flight');
  expect(journal.lastSent('busy', SEND, params(-2))?.outcome).toBe('in-flight');
}, 60_000);
