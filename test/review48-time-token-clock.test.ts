// Review 48 (time): a confirmationToken lives five minutes, judged by the system clock when it comes
// back. A clock set back between the preview and the yes (NTP correcting a clock that ran fast) made
// it live that much longer: set back an hour, a token shown a quarter of an hour before was taken, and sent
// the write, where one shown that long before on a steady clock is refused as expired. A token now
// also expires by this process's clock that never goes back (journal.ts forwardNow): a clock set
// back after it was issued lengthens its life at most twofold (that clock runs at half rate while
// ahead), never by the hour.
import { describe, expect, it } from 'vitest';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { twoClocks } from './review48-time-clocks.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review48-token-clock', '62814804');
const MINUTE = 60_000;

describe('a preview, then a quarter of an hour, and the system clock set back an hour on the way', () => {
  it('its token has expired: nothing is sent, and a new preview is given', { timeout: 60_000 }, async () => {
    const clock = twoClocks(root);
    const server = await launchChannel(sandbox(), stateDir(), 'all', clock.env);
    try {
      const preview = await callSend(server, { params: params(1) });
      expect(structuredOf(preview).outcome, textOf(preview)).toBe('preview');
      clock.set(-60 * MINUTE + 15 * MINUTE, 15 * MINUTE);
      const before = sends();
      const late = await callSend(server, { params: params(1), confirmationToken: structuredOf(preview).confirmationToken });
      expect(structuredOf(late).outcome, textOf(late)).toBe('preview');
      expect(textOf(late)).toMatch(/expired/);
      expect(sends()).toBe(before);
      // The new preview's token, used at once, sends it.
      const sent = await callSend(server, { params: params(1), confirmationToken: structuredOf(late).confirmationToken });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
    } finally {
      await server.close();
    }
  });
});
