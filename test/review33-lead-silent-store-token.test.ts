// Review 33 (lead): a write whose yes came with a confirmationToken, held past its mark's renewal
// (a rate limit's wait, the process paused), found the shared store silent at its check before the
// send: nothing was sent, and the model was told to "try again in a moment". The token was spent by
// then, so the same call again was refused as a used token; every other refusal after a token's yes
// says to call again without it (a new preview). This one now says so too.
import { describe, expect, it } from 'vitest';
import type { CallDeps } from '../shared/src/call/context.js';
import { checkStillOwned, MarkTakenOver, type SharedMark } from '../shared/src/call/shared-mark.js';
import type { Operation } from '../shared/src/model/types.js';

const op = { id: 'channel.whatsapp.send' } as Operation;
const silentStore = {
  guard: { store: () => ({ renewWrite: () => Promise.reject(new Error('Redis did not answer')) }) },
  log: { warn: () => undefined },
} as unknown as CallDeps;

/** A mark last renewed long ago (by both clocks), so the check asks the store. */
function staleMark(confirmation?: string): SharedMark {
  return {
    write: 'w',
    id: 'owner',
    at: 0,
    ...(confirmation ? { confirmation } : {}),
    renewing: setInterval(() => undefined, 1_000_000),
    renewed: { at: Date.now() - 10 * 60_000, steady: performance.now() - 10 * 60_000 },
    needsYes: true,
  };
}

describe('the store silent at the check before a held write is sent', () => {
  it('a yes by token: told the token is spent and to call again without it', async () => {
    const mark = staleMark('a-confirmation');
    const refused = await checkStillOwned(silentStore, op, mark).catch((error: unknown) => error);
    clearInterval(mark.renewing);
    expect(refused).toBeInstanceOf(MarkTakenOver);
    expect((refused as Error).message).toContain('Nothing was sent by this call.');
    expect((refused as Error).message).toContain('call without a confirmationToken');
  });

  it('a yes given without a token: told to try again', async () => {
    const mark = staleMark();
    const refused = await checkStillOwned(silentStore, op, mark).catch((error: unknown) => error);
    clearInterval(mark.renewing);
    expect((refused as Error).message).toMatch(/Nothing was sent by this call\. Try again in a moment\.$/);
  });
});
