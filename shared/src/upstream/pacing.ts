// Retry and pacing policy, kept free of I/O so it can be unit tested.

/** Repeats of one request after 429s; each waits Retry-After. */
export const MAX_RATE_LIMIT_RETRIES = 3;
/** Repeats of a safe request after a network error, timeout or 502/503/504. */
export const MAX_SAFE_RETRIES = 2;
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 2_000;

/** Full-jitter exponential backoff: attempt 0 waits up to 250 ms, then 500, 1000, capped at 2 s. */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The longest Retry-After believed (a day); what is actually waited is capped far lower (ENGAGE_MAX_RETRY_WAIT_S). */
const MAX_RETRY_AFTER_S = 86_400;

/**
 * Retry-After in seconds, at most MAX_RETRY_AFTER_S. The spec says an integer; an HTTP date is
 * tolerated; anything else (absent, negative, garbage) counts as one second, so a broken header
 * neither hammers nor stalls.
 */
export function parseRetryAfter(header: string | undefined, now: number = Date.now()): number {
  if (header === undefined) return 1;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed), MAX_RETRY_AFTER_S);
  const date = Date.parse(trimmed);
  if (!Number.isNaN(date) && /[a-z]/i.test(trimmed)) return Math.min(MAX_RETRY_AFTER_S, Math.max(0, Math.ceil((date - now) / 1000)));
  return 1;
}

export function parseIntegerHeader(header: string | undefined): number | undefined {
  if (header === undefined || !/^\s*\d+\s*$/.test(header)) return undefined;
  return Number(header);
}

export function isRetryableStatus(status: number): boolean {
  return status === 502 || status === 503 || status === 504;
}

/**
 * What the request helper needs of a pace: the in-process Pacer below, or one shared by every
 * replica of a remote service (through Redis). Methods may answer synchronously or not.
 */
export interface PaceKeeper {
  /** How long to wait before sending (0: go now), or undefined if that is longer than maxWaitMs. */
  reserve(maxWaitMs: number): number | undefined | Promise<number | undefined>;
  observe(limit: number | undefined, remaining: number | undefined, resetSeconds: number | undefined): void | Promise<void>;
  hold(waitMs: number, capMs: number): void | Promise<void>;
  waitEstimateMs(): number | Promise<number>;
}

/**
 * Remote mode's fairness between keys: a slot taken around each request attempt, so that one key
 * (or a crowd of keys the API never accepted) cannot hold every connection of the shared pool.
 * `acquire` resolves when the attempt may start (it rejects once `signal` aborts); the release is
 * told the attempt's HTTP status, if one came, which is how the slots learn which keys the API accepts.
 */
export interface UpstreamSlots {
  acquire(signal?: AbortSignal): Promise<(status?: number) => void>;
}

/**
 * One pace shared by every call of a process. The RateLimit headers tell how many tokens the
 * bucket holds; while it is empty, requests start one refill interval apart instead of all at
 * once, so a burst of concurrent calls does not stampede into 429s.
 */
export class Pacer implements PaceKeeper {
  private remaining = Number.POSITIVE_INFINITY;
  private intervalMs = 1_000;
  private nextSlotAt = 0;

  /**
   * `now`: the monotonic clock by default. The pace only measures waits: by the system clock, a
   * clock set back an hour after a 429 held every request for that hour.
   */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /**
   * Takes a token or a slot. Returns how long the caller must wait before sending (0: go now),
   * or undefined if that wait is longer than `maxWaitMs` (the slot is then not taken).
   */
  reserve(maxWaitMs: number): number | undefined {
    const now = this.now();
    if (this.remaining > 0 && now >= this.nextSlotAt) {
      this.remaining -= 1;
      return 0;
    }
    const slot = Math.max(now, this.nextSlotAt);
    if (slot - now > maxWaitMs) return undefined;
    this.nextSlotAt = slot + this.intervalMs;
    return slot - now;
  }

  /** Learns the bucket's state from a response's RateLimit headers. */
  observe(limit: number | undefined, remaining: number | undefined, resetSeconds: number | undefined): void {
    if (limit !== undefined && limit > 0) this.intervalMs = Math.ceil(60_000 / limit);
    if (remaining === undefined) return;
    this.remaining = remaining;
    if (remaining === 0) {
      const refill = resetSeconds !== undefined && resetSeconds > 0 ? Math.min(resetSeconds * 1000, this.intervalMs) : this.intervalMs;
      this.nextSlotAt = Math.max(this.nextSlotAt, this.now() + refill);
    }
  }

  /**
   * After a 429: nobody sends for `waitMs`, at most `capMs`. A longer Retry-After is not obeyed
   * for later calls: once the cap has passed, the next call asks the API again, so one absurd
   * header cannot refuse every call for a day.
   */
  hold(waitMs: number, capMs: number): void {
    this.remaining = 0;
    this.nextSlotAt = Math.max(this.nextSlotAt, this.now() + Math.min(Math.max(0, waitMs), capMs));
  }

  /** How long until the pace lets a request through; for the answer's "try again in". */
  waitEstimateMs(): number {
    return Math.max(0, this.nextSlotAt - this.now());
  }
}
