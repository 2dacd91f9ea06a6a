// The clock this process dates its yeses, its writes' attempts and its tokens' second expiry by: the
// system clock, never going back (a room of its own: the journal and the confirmations both read it).

/** The latest time `forwardNow` gave (to the fraction of a millisecond), and the monotonic clock's reading then. */
let latest = 0;
let latestAtMonotonic = 0;
/** How fast forwardNow moves, against the monotonic clock, while it stands ahead of the system clock. */
const AHEAD_RATE = 0.5;
/** A lead this small is the system clock's own step (some step by 1/64 s), not a clock set back: kept at the monotonic rate. */
const LEAD_KEPT_MS = 16;

/**
 * The system clock as this process dates its yeses and its writes' attempts: never going back.
 * A clock set back (NTP correcting a clock that ran fast) would date a send before a yes shown
 * before it, and the claim would let that yes send the write again; the highest time given so far
 * carries on instead, at half the monotonic clock's rate, until the system clock catches up (an
 * hour set back is caught up in two). Standing still, it dated a yes given an hour after a send
 * with that send, and no ended attempt expired; at the full rate it stayed ahead for the process's
 * life, and a yes (dated by the system clock, confirm.ts) to a write sent in the last half hour
 * read as given before that send, and was refused, for weeks.
 */
export function forwardNow(): number {
  const monotonic = performance.now();
  const system = Date.now();
  const elapsed = monotonic - latestAtMonotonic;
  const carried = latest + elapsed;
  latest = Math.max(system, carried - system > LEAD_KEPT_MS ? latest + elapsed * AHEAD_RATE : carried);
  latestAtMonotonic = monotonic;
  // Whole milliseconds, as the system clock gives them (the stores keep times as such); kept to the fraction above.
  return Math.floor(latest);
}
