// Review 48 (time): forwardNow (journal.ts) dates a process's write attempts by a clock that never
// goes back; after the system clock was set back (NTP correcting a clock that ran an hour fast, a
// laptop whose clock was set wrong and then right), it carried on from its highest reading at the
// monotonic clock's rate, so it stayed that hour ahead of the system clock for the rest of the
// process's life (a stdio server runs for weeks). A yes is dated by the system clock (no later than
// it: confirm.ts), so from then on every yes to a write identical to one sent in the last half hour
// read as given before that send, and was refused ("sent after this confirmation was given") though
// the person had been shown the earlier send and agreed. It now runs at half the monotonic rate while
// ahead of the system clock, never going back, until the system clock has caught up.
import { describe, expect, it } from 'vitest';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { twoClocks } from './review48-time-clocks.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review48-forward-gap', '62814801');
const HOUR = 3_600_000;

describe('a clock that ran an hour fast, set right, three hours before a write is sent twice on purpose', () => {
  it('the second yes, given after the first send and its warning, sends the write', { timeout: 60_000 }, async () => {
    const clock = twoClocks(root);
    clock.set(HOUR, 0);
    const server = await launchChannel(sandbox(), stateDir(), 'all', clock.env);
    try {
      // Read once while an hour fast: a preview dates what it shows.
      expect(structuredOf(await callSend(server, { params: params(0) })).outcome).toBe('preview');
      // Set right, then three hours go by on both clocks.
      clock.set(3 * HOUR, 3 * HOUR);
      const before = sends();
      const first = await callSend(server, { params: params(1) });
      const sent = await callSend(server, { params: params(1), confirmationToken: structuredOf(first).confirmationToken });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      // The same write again: the preview names the send, and the person says yes to it all the same.
      const second = await callSend(server, { params: params(1) });
      expect(textOf(second)).toMatch(/already|before|earlier/i);
      const again = await callSend(server, { params: params(1), confirmationToken: structuredOf(second).confirmationToken });
      expect(structuredOf(again).outcome, textOf(again)).toBe('done');
      expect(sends()).toBe(before + 2);
    } finally {
      await server.close();
    }
  });
});
