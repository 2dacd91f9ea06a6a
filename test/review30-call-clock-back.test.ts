// Review 30 (call path): the system clock set back. The claim refuses a yes given before the same
// write went out (two previews of one write, each with its token, both agreed to: the second
// token redeemed after the first sent it sends nothing), by comparing the yes's time with the
// send's, both read from the system clock. A clock set back between the second preview and the
// first send (NTP correcting a clock that ran fast, a VM's clock synced to its host's) dated the
// send before that second yes, and its token sent the write a second time. Within a process, the
// times a yes and a send are dated by now never go back (the highest time read so far stands until
// the clock passes it), so a send always dates after every yes shown before it.
import { describe, expect, it } from 'vitest';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { clockShifter } from './helpers/clock-shifter.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review30-clock-back', '62813002');

describe('two previews of one write, both agreed to, and the clock set back two minutes before the first token is used', () => {
  it('the second token sends nothing: the write went out after it was given', { timeout: 60_000 }, async () => {
    const clock = clockShifter(root);
    const server = await launchChannel(sandbox(), stateDir(), 'all', clock.env);
    try {
      const before = sends();
      const first = await callSend(server, { params: params(1) });
      const second = await callSend(server, { params: params(1) });
      expect(structuredOf(first).outcome, textOf(first)).toBe('preview');
      expect(structuredOf(second).outcome, textOf(second)).toBe('preview');
      clock.set(-2 * 60_000);
      const sent = await callSend(server, { params: params(1), confirmationToken: structuredOf(first).confirmationToken });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      const again = await callSend(server, { params: params(1), confirmationToken: structuredOf(second).confirmationToken });
      expect(textOf(again)).toMatch(/after this confirmation was given/);
      expect(structuredOf(again).outcome).toBe('refused');
      expect(sends()).toBe(before + 1);
    } finally {
      await server.close();
    }
  });
});
