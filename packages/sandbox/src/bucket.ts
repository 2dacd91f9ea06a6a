// The rate limiter's token bucket, one per key and one per tenant.

/** Token bucket: `capacity` tokens (the burst), refilled at `perMinute`. */
export class Bucket {
  private tokens: number;
  private updatedAt = Date.now();
  constructor(
    readonly perMinute: number,
    readonly capacity: number = perMinute,
  ) {
    this.tokens = capacity;
  }
  private refill(now: number) {
    // A request's time is read before its key's bucket is made: a bucket made a millisecond later
    // must not count that as time owed (it read 0.99998 tokens and refused a full bucket with 429).
    if (now <= this.updatedAt) return;
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.updatedAt) / 60_000) * this.perMinute);
    this.updatedAt = now;
  }
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
  remaining(now: number): number {
    this.refill(now);
    return Math.floor(this.tokens);
  }
  secondsUntilToken(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 60) / this.perMinute);
  }
  secondsUntilFull(now: number): number {
    this.refill(now);
    return Math.ceil(((this.capacity - this.tokens) * 60) / this.perMinute);
  }
}
