// Locks of keys whose window came in a call's arguments (the core's key-guesses.ts), for a service
// that takes any key that comes. The core keeps at most 100,000 locks and, past that, keeps no new
// one: made-up keys, each sending a window of itself (no API request needed), filled that room in
// minutes, after which a tenant's key pasted into a chat was refused for that call only and not
// locked. Keys the API has not accepted (fairness.ts) now lock in a room of their own.
import { KeyGuesses } from '@engage-mcp/shared';

export class ServiceKeyGuesses extends KeyGuesses {
  private readonly ofUnaccepted: KeyGuesses;

  constructor(
    private readonly isAccepted: (keyId: string) => boolean,
    now: () => number = Date.now,
    log?: { warn(message: string): void },
  ) {
    super(now, log);
    this.ofUnaccepted = new KeyGuesses(now, log);
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
