// Locks of keys whose window came in a call's arguments (the core's key-guesses.ts), for a service
// that takes any key that comes. The core keeps at most 100,000 locks and, past that, keeps no new
// one: made-up keys, each sending a window of itself (no API request needed), filled that room in
// minutes, after which a tenant's key pasted into a chat was refused for that call only and not
// locked. Keys the API has not accepted (fairness.ts) now lock in a room of their own, where the
// oldest lock gives way to a new one.
import { KEY_LOCK_MS, KeyGuesses } from '@engage-mcp/shared';

/** As many as the core's room keeps. */
const UNACCEPTED_LOCKS_KEPT = 100_000;

/**
 * Locks of keys the API has not accepted, at most UNACCEPTED_LOCKS_KEPT: past that the oldest is
 * forgotten. A made-up key's lock guards nothing (the API refuses the key), but a new lock may be a
 * tenant's whose first call on this replica held its key: a room that kept no new lock once full
 * (the core's rule) left that key unlocked for as long as made-up keys kept the room full (28 a
 * second). Now a flood must push 100,000 locks past it to free it.
 */
class UnacceptedLocks {
  private readonly locks = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  lock(keyId: string): void {
    this.locks.delete(keyId); // re-inserted: oldest first
    this.locks.set(keyId, this.now() + KEY_LOCK_MS);
    if (this.locks.size > UNACCEPTED_LOCKS_KEPT) this.locks.delete(this.locks.keys().next().value as string);
  }

  locked(keyId: string): boolean {
    const until = this.locks.get(keyId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.locks.delete(keyId);
    return false;
  }
}

export class ServiceKeyGuesses extends KeyGuesses {
  private readonly ofUnaccepted: UnacceptedLocks;

  constructor(
    private readonly isAccepted: (keyId: string) => boolean,
    now: () => number = () => performance.now(),
    log?: { warn(message: string): void },
  ) {
    super(now, log);
    this.ofUnaccepted = new UnacceptedLocks(now);
  }

  override lock(keyId: string): void {
    if (this.isAccepted(keyId)) super.lock(keyId);
    else this.ofUnaccepted.lock(keyId);
  }

  /** Locked in either room: a key locked before the API first accepted it stays locked. */
  override locked(keyId: string): boolean {
    return super.locked(keyId) || this.ofUnaccepted.locked(keyId);
  }
}
