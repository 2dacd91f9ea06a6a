// A key locked for an hour after a guess at it (key-guesses.ts) was timed by the system clock: a
// clock set forward (NTP correcting one that ran slow, a VM resumed) lifted the lock at once. The
// lock lives in memory, so it is timed by the monotonic clock, on stdio and in remote mode.
import { expect, it, vi } from 'vitest';
import { ServiceKeyGuesses } from '../packages/http/src/key-locks.js';
import { KeyGuesses } from '../shared/src/call/key-guesses.js';

it.each([
  ['stdio', () => new KeyGuesses()],
  ['remote mode, an accepted key', () => new ServiceKeyGuesses(() => true)],
  ['remote mode, a key not yet accepted', () => new ServiceKeyGuesses(() => false)],
])('%s: a lock outlasts a system clock set two hours forward', (_where, make) => {
  let wall = Date.now();
  // Put back before anything else in this worker can run: a timer reading the clock two hours on
  // would carry forwardNow (which never goes back) two hours ahead for every later file here.
  const clock = vi.spyOn(Date, 'now').mockImplementation(() => wall);
  try {
    const guesses = make();
    guesses.lock('key-1');
    wall += 2 * 3_600_000;
    expect(guesses.locked('key-1')).toBe(true);
  } finally {
    clock.mockRestore();
  }
});
