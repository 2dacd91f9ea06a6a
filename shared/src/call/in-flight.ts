// The writes a server has in flight. A server that is stopping waits for them (up to a bound): a
// write at the API is never abandoned on its way, so its outcome is noted in the journal, the
// idempotency record and the audit record, and a repeat is told what happened.

export class WritesInFlight {
  private count = 0;
  private waiting: Array<() => void> = [];
  /** The server is stopping: a write started now could be cut off at the API by the exit, its outcome never noted. */
  private stopping = false;

  /** No new write is taken from now on (register.ts answers it with serverStopping). */
  refuseNew(): void {
    this.stopping = true;
  }

  get refusing(): boolean {
    return this.stopping;
  }

  /** `call`, counted until it settles. */
  async during<T>(call: Promise<T>): Promise<T> {
    this.count++;
    try {
      return await call;
    } finally {
      this.count--;
      // Woken on the next turn of the loop: the SDK writes the call's answer first.
      if (this.count === 0) for (const wake of this.waiting.splice(0)) setImmediate(wake);
    }
  }

  /** Resolves true when no write is in flight, or false after `timeoutMs` with one still in flight. */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.count === 0), timeoutMs);
      this.waiting.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
