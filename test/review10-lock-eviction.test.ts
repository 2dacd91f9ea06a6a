// review10: a lock is forgotten when 10,000 newer ones are taken. Remote mode accepts any bearer
// value as a key (keyGuard takes it as it comes) and screen locks before anything is sent, so a
// caller with an OAuth grant (key mode on too) takes 10,000 locks for made-up keys, each by a call
// whose arguments hold its own made-up key, in seconds and at no cost upstream: the tenant's lock is gone.
import { describe, expect, it } from 'vitest';
import { KeyGuesses } from '@engage-mcp/shared';

describe('review10: locks can be pushed out', () => {
  it('the tenant key stays locked whatever other keys are locked after it', () => {
    const guesses = new KeyGuesses();
    guesses.lock('tenant');
    for (let index = 0; index < 10_000; index++) guesses.lock(`made-up-${index}`);
    expect(guesses.locked('tenant')).toBe(true);
  });
});
