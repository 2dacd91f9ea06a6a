// Review 30 (call path): a write that needs no yes is kept from going out twice only by this
// server's write journal, which marks it in flight at the claim and refuses the same write while
// it is out. That journal forgot an attempt half an hour after it was marked, by the system clock,
// whatever its outcome: a write still at the API when the clock was set forward half an hour
// (NTP correcting a clock that was behind, a VM resumed), or still waiting out a 429's Retry-After
// (ENGAGE_MAX_RETRY_WAIT_S goes to an hour, three times), read as never sent, and the host's retry
// of the same call sent it a second time. An attempt still in flight is now remembered until it ends.
import { describe, expect, it } from 'vitest';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { clockShifter } from './helpers/clock-shifter.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review30-in-flight', '62813001');

describe('a write that needs no yes, still at the API when the system clock is set forward 31 minutes', () => {
  it("is not sent again by the host's retry of the same call: the retry is told it is still being sent", { timeout: 60_000 }, async () => {
    const clock = clockShifter(root);
    const server = await launchChannel(sandbox(), stateDir(), 'none', clock.env);
    try {
      const before = sends();
      const atApi = requestsAtApi(sandbox(), SEND);
      sandbox().injectFault({ kind: 'delay', operationId: SEND, delayMs: 3_000 });
      const first = callSend(server, { params: params(1) });
      first.catch(() => undefined); // awaited below; a failed test closes the server under it
      await until('the first send is at the API', () => requestsAtApi(sandbox(), SEND) > atApi);
      clock.set(31 * 60_000);
      const retry = await callSend(server, { params: params(1) });
      expect(textOf(retry)).toMatch(/still being sent/);
      expect(structuredOf(retry).outcome).toBe('unknown');
      const sent = await first;
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
    } finally {
      await server.close();
    }
  });
});
