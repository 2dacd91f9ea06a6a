// A yes given through a 2025 session's question (elicitation) was dated by forwardNow (journal.ts):
// after the server's system clock is set back (NTP correcting a clock that ran fast), the highest
// time it read stands until the clock passes it, so the yes was dated minutes ahead of the time it
// was shown. Within the process that only refuses more (its sends are dated the same way), but
// another server sharing the state directory dates its sends by its own clock: the same write sent
// there after the question was shown, and before the person said yes, dated before that yes, and
// the yes sent it a second time. A yes is now dated no later than the system clock when it was
// shown, as a token's and a requestState's are.
import { describe, expect, it } from 'vitest';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { clockShifter } from './helpers/clock-shifter.js';
import { lineServer } from './helpers/line-server.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review31-yes-ahead', '62813103');

/** The built channel server over stdio in a 2025 session that can ask, spoken to line by line; `onAsk` says yes or no to its questions. */
function askingServer(env: Record<string, string>, onAsk: () => Promise<boolean>) {
  return lineServer('channel', env, async () => ((await onAsk()) ? { action: 'accept', content: { confirm: true } } : { action: 'decline' }));
}

describe('two servers on one state directory, one asking the person, its clock set back five minutes', () => {
  it('the same write sent by the other server while the question was open is not sent again on the yes', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const clock = clockShifter(root);
    const other = await launchChannel(sandbox(), dir, 'all');
    let onAsk: () => Promise<boolean> = async () => false;
    const asking = askingServer(
      { ENGAGE_BASE_URL: sandbox().baseUrl, ENGAGE_API_KEY: sandbox().keys.full, ENGAGE_STATE_DIR: dir, ENGAGE_CONFIRM: 'all', ...clock.env },
      () => onAsk(),
    );
    try {
      await asking.open();
      const send = (message: Record<string, unknown>) =>
        asking.request('tools/call', { name: 'channel_action', arguments: { operationId: SEND, params: message } });
      // Its clock ran five minutes fast while it asked once (declined); then it is set right.
      clock.set(5 * 60_000);
      expect((await send(params(1))).result.structuredContent).toMatchObject({ outcome: 'declined' });
      clock.set(0);
      const before = sends();
      // While the person looks at the question, the other server sends the same write (its own preview and token).
      onAsk = async () => {
        const preview = await callSend(other, { params: params(2) });
        const token = structuredOf(preview).confirmationToken;
        const sent = await callSend(other, { params: params(2), confirmationToken: token });
        expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
        return true;
      };
      const yes = await send(params(2));
      expect(sends() - before, JSON.stringify(yes.result.content)).toBe(1);
      expect(yes.result.structuredContent).toMatchObject({ outcome: 'refused' });
      expect(yes.result.content[0].text).toMatch(/after this confirmation was given|sent .* since/i);
    } finally {
      asking.child.kill();
      await other.close();
    }
  });
});
