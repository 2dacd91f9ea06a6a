// Review 48 (time): forwardNow (journal.ts) after the system clock is set back. It carried on from its
// highest reading at the monotonic clock's rate, so the lead it took stayed for the process's life;
// it now runs at half that rate while ahead, never going back, until the system clock catches up
// (review48-time-forward-gap.test.ts: the yes that was refused for it).
// vitest: modules of its own (it moves forwardNow years ahead, and that clock never goes back).
import { afterEach, expect, it, vi } from 'vitest';
import { forwardNow } from '../shared/src/call/journal.js';

afterEach(() => vi.restoreAllMocks());

const HOUR = 3_600_000;

it('after the system clock is set back an hour, it never goes back and has caught up with the system clock within two hours', () => {
  let wall = 2_200_000_000_000;
  let mono = 50_000;
  vi.spyOn(Date, 'now').mockImplementation(() => wall);
  vi.spyOn(performance, 'now').mockImplementation(() => mono);
  expect(forwardNow()).toBe(wall);
  wall -= HOUR; // NTP corrects a clock that ran an hour fast
  const given: number[] = [];
  // Read every minute for two hours, the system clock moving with the monotonic one.
  for (let minute = 0; minute <= 120; minute++) {
    given.push(forwardNow());
    wall += 60_000;
    mono += 60_000;
  }
  expect(given.every((time, index) => index === 0 || time > (given[index - 1] as number))).toBe(true);
  // An hour on, it still leads, by half an hour: what it gave before is never given again.
  expect((given[60] as number) - (wall - 61 * 60_000)).toBe(HOUR / 2);
  // Two hours on, it has caught up: at most a step of the system clock ahead (journal.ts LEAD_KEPT_MS).
  const lastLead = (given.at(-1) as number) - (wall - 60_000);
  expect(lastLead).toBeGreaterThanOrEqual(0);
  expect(lastLead).toBeLessThanOrEqual(16);
});
