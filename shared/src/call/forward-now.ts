// The clock this process dates its yeses, its writes' attempts and its tokens' second expiry by: the
// system clock, never going back (a room of its own: the journal and the confirmations both read it).

/** How fast a forward clock moves, against the monotonic clock, while it stands ahead of the system clock. */
const AHEAD_RATE = 0.5;
/** A lead this small is the system clock's own step (some step by 1/64 s), not a clock set back: kept at the monotonic rate. */
const LEAD_KEPT_MS = 16;

/**
 * The system clock as a process dates its yeses and its writes' attempts: never going back.
 * A clock set back (NTP correcting a clock that ran fast) would date a send before a yes shown
 * before it, and the claim would let that yes send the write again; the highest time given so far
 * carries on instead, at half the monotonic clock's rate, until the system clock catches up (an
 * hour set back is caught up in two). Standing still, it dated a yes given an hour after a send
 * with that send, and no ended attempt expired; at the full rate it stayed ahead for the process's
 * life, and a yes (dated by the system clock, confirm.ts) to a write sent in the last half hour
 * read as given before that send, and was refused, for weeks. One rule for every such clock: a
 * copy kept at the full rate (remote mode's report of a replica's lead) kept that lead for good.
 */
export class ForwardClock {
  /** The latest time given (to the fraction of a millisecond), and the monotonic clock's reading then. */
  private latest = 0;
  private latestAtMonotonic = 0;

  /** `given`: a time a caller read on this clock (an attempt's, say): never read below from then on. */
  now(given = 0): number {
    const monotonic = performance.now();
    const system = Date.now();
    const elapsed = monotonic - this.latestAtMonotonic;
    const carried = this.latest + elapsed;
    const moved = carried - system > LEAD_KEPT_MS ? this.latest + elapsed * AHEAD_RATE : carried;
    this.latest = Math.max(given, system, moved);
    this.latestAtMonotonic = monotonic;
    // Whole milliseconds, as the system clock gives them (the stores keep times as such); kept to the fraction above.
    return Math.floor(this.latest);
  }
}

const processClock = new ForwardClock();

/** This process's forward clock (ForwardClock): what the journal, yeses and confirmations' expiry go by. */
export function forwardNow(): number {
  return processClock.now();
}
