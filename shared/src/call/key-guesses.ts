// The model is never shown the key, so arguments holding it (or a part of it, in any form) are a
// guess at it. Refusing such a call tells the model its guess was right: a part of the key grown a
// character at a time would spell the whole key out within a few dozen calls. So the first such
// call locks the key: every call made with it is refused for LOCK_MS (a local server: until it
// restarts), and the answer names no field. What a lock costs is one tenant's calls for an hour,
// on the word of a model that held the key: the person is told to replace it.

/** How long a key stays locked after a call's arguments held a part of it. */
export const KEY_LOCK_MS = 60 * 60 * 1000;
/**
 * How many locks are kept (remote mode takes any key that comes): a live lock is never pushed out
 * by newer ones, so past this many a new lock is not kept (its call is refused all the same).
 */
const LOCKS_KEPT = 100_000;

export class KeyGuesses {
  private readonly locks = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  lock(keyId: string): void {
    if (this.locks.size >= LOCKS_KEPT) for (const [id, until] of this.locks) if (until <= this.now()) this.locks.delete(id);
    if (this.locks.size < LOCKS_KEPT || this.locks.has(keyId)) this.locks.set(keyId, this.now() + KEY_LOCK_MS);
  }

  locked(keyId: string): boolean {
    const until = this.locks.get(keyId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.locks.delete(keyId);
    return false;
  }
}
