// forwardNow (journal.ts) dates this process's yeses and write attempts by a clock that never goes
// back, so a clock set back cannot date a send before a yes shown earlier. It stood still until the
// system clock passed its highest reading: after a clock that ran a day ahead was corrected, every
// time it gave for a day was the same, so a yes given an hour after a send was dated with it ("given
// before the send": refused, though the person had seen the warning), and no ended attempt expired.
// Now it carries on from its highest reading at half the rate of the monotonic clock while ahead,
// until the system clock catches up (review48-time: at the full rate it stayed ahead for good).
// vitest: modules of its own (it moves forwardNow years ahead, and that clock never goes back).
import { afterEach, expect, it, vi } from 'vitest';
import { forwardNow } from '../shared/src/call/journal.js';

afterEach(() => vi.restoreAllMocks());

it('after the system clock is set back a day, it goes on moving forward, from where it stood', () => {
  let wall = 2_000_000_000_000;
  let mono = 1_000;
  vi.spyOn(Date, 'now').mockImplementation(() => wall);
  vi.spyOn(performance, 'now').mockImplementation(() => mono);
  const before = forwardNow();
  expect(before).toBe(wall);
  wall -= 24 * 3_600_000; // NTP corrects a clock that ran a day fast
  mono += 10;
  const justAfter = forwardNow();
  expect(justAfter).toBe(before + 5);
  wall += 3_600_000; // an hour later, still a day behind where it stood
  mono += 3_600_000;
  const anHourLater = forwardNow();
  expect(anHourLater).toBe(justAfter + 1_800_000);
  // Once the system clock passes it again, the system clock's time is given.
  wall = anHourLater + 24 * 3_600_000;
  mono += 1;
  expect(forwardNow()).toBe(wall);
});

it('gives whole milliseconds, never going back, when called more often than once a millisecond', () => {
  let mono = 5_000.25;
  const wall = 2_100_000_000_000;
  vi.spyOn(Date, 'now').mockImplementation(() => wall);
  vi.spyOn(performance, 'now').mockImplementation(() => mono);
  const times: number[] = [];
  for (let call = 0; call < 10; call++) {
    times.push(forwardNow());
    mono += 0.3;
  }
  expect(times.every(Number.isSafeInteger)).toBe(true);
  expect(times.every((time, index) => index === 0 || time >= (times[index - 1] as number))).toBe(true);
  // The fractions add up: 2.7 ms after the first call, at least 2 ms have been given.
  expect((times.at(-1) as number) - (times[0] as number)).toBeGreaterThanOrEqual(2);
});
