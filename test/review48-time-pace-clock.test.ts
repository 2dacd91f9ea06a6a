// Review 48 (time): the pace a server keeps with the API (pacing.ts Pacer) timed its waits by the
// system clock. After a 429 it holds every request until a time on that clock; a clock set back an
// hour then (NTP correcting a clock that ran fast, a laptop's clock set right) put that time an hour
// away, so every call after it was refused ("rate limit exhausted … try again in 3601 s") for an
// hour, though the API was ready a second later. The pace now counts by the monotonic clock: it only
// ever measures how long to wait.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchChannel } from './helpers/stdio-channel.js';
import { textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { clockShifter } from './helpers/clock-shifter.js';

const { root, sandbox, stateDir } = stateDirFixture('review48-pace-clock', '62814803');

describe('a 429, then the system clock set back an hour', () => {
  it('the next read goes to the API at once', { timeout: 60_000 }, async () => {
    const clock = clockShifter(root);
    const server = await launchChannel(sandbox(), stateDir(), 'none', clock.env);
    const read = () => server.client.callTool({ name: 'channel_read', arguments: { operationId: 'channel.list' } }) as Promise<CallToolResult>;
    try {
      sandbox().injectFault({ kind: 'rate-limit', retryAfter: '1', operationId: 'channel.list', times: 1 });
      const waited = await read();
      expect(waited.isError, textOf(waited)).toBeFalsy();
      clock.set(-3_600_000);
      const after = await read();
      expect(after.isError, textOf(after)).toBeFalsy();
    } finally {
      await server.close();
    }
  });
});
