// Review 25b: the sweep of the stdio servers' state directory runs every 10 minutes, by the store's
// clock. A clock set back (an hour, by NTP or by hand) stopped every sweep of that process until the
// clock was past its last sweep again: an hour and ten minutes in which expired entries and files a
// crash left piled up. A clock set back now sweeps at once; entries still expire by their own times.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { stateDirFixture } from './state-dir-fixture.js';

const { stateDir } = stateDirFixture('review25b-sweep', '62812559');

describe('the clock set back', () => {
  it('an entry that expired after the clock went back is swept on the next due turn, not an hour later', async () => {
    const dir = stateDir();
    const start = Date.parse('2026-11-01T12:00:00Z');
    let now = start;
    const store = new FileGuardStore(dir, undefined, () => now);
    await store.take('c', 1, 10, now + 60_000); // the process's first turn sweeps
    now = start - 60 * 60_000; // set back an hour
    await store.reserve('short', { operationId: 'x', digest: 'd', at: now }, now + 60_000);
    expect(readdirSync(join(dir, 'records'))).toHaveLength(1);
    now += 20 * 60_000; // twenty minutes on: the record expired 19 minutes ago, and a sweep is due
    await store.take('c', 1, 10, now + 60_000);
    expect(readdirSync(join(dir, 'records'))).toEqual([]);
    expect(await store.lookup('short')).toBeUndefined();
  });
});
