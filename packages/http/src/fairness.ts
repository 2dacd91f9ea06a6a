// Fairness between tenants on the one upstream pool (16 connections shared by every key): each key
// has a few request slots of its own, and keys the API has not accepted yet (made-up ones) share a
// small allowance between them. One tenant's flood then queues behind its own slots, never in front
// of another tenant's read. A key counts as accepted once the API answers it with anything but 401, 429 or a 5xx,
// or once it comes with an OAuth access token (vouch).
import type { UpstreamSlots } from '@engage-mcp/shared';

export interface FairnessLimits {
  /** Upstream requests one key may have at once. */
  perKey: number;
  /** Upstream requests all keys not yet accepted by the API may have at once, together. */
  unaccepted: number;
}

/** How many accepted keys are remembered (by fingerprint, ~100 bytes each); the least recently seen is forgotten first. */
const ACCEPTED_KEPT = 100_000;

/** A counting semaphore whose waiters leave when their signal aborts. */
class Slots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  take(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.active < this.size) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener('abort', leave);
        this.active++;
        resolve();
      };
      const leave = () => {
        const at = this.waiting.indexOf(turn);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal?.reason);
      };
      this.waiting.push(turn);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  give(): void {
    this.active--;
    this.waiting.shift()?.();
  }
}

export class Fairness {
  private readonly ofKey = new Map<string, Slots>();
  private readonly unaccepted: Slots;
  private readonly accepted = new Map<string, true>();

  constructor(private readonly limits: FairnessLimits) {
    this.unaccepted = new Slots(limits.unaccepted);
  }

  /** Has the API answered this key lately with anything but 401, 429 or a 5xx (see learn)? */
  isAccepted(keyId: string): boolean {
    return this.accepted.has(keyId);
  }

  /**
   * A key that came with an OAuth access token: its grant was made only after the API accepted the
   * key (the consent page's check), and ends when the API refuses it (401). A replica that has not
   * seen the key yet (just started, or another's sign-in) no longer queues it with made-up keys.
   */
  vouch(keyId: string): void {
    this.accepted.delete(keyId); // re-inserted: oldest first
    this.accepted.set(keyId, true);
    if (this.accepted.size > ACCEPTED_KEPT) this.accepted.delete(this.accepted.keys().next().value as string);
  }

  /** The slots a call with this key takes around each upstream request attempt. */
  slotsOf(keyId: string): UpstreamSlots {
    return { acquire: (signal) => this.acquire(keyId, signal) };
  }

  private async acquire(keyId: string, signal: AbortSignal | undefined): Promise<(status?: number) => void> {
    let own = this.ofKey.get(keyId);
    if (!own) this.ofKey.set(keyId, (own = new Slots(this.limits.perKey)));
    try {
      await own.take(signal);
    } catch (error) {
      if (own.idle) this.ofKey.delete(keyId);
      throw error;
    }
    // Decided once the key's own slot is held: a key accepted meanwhile skips the shared allowance.
    const shared = this.accepted.has(keyId) ? undefined : this.unaccepted;
    try {
      await shared?.take(signal);
    } catch (error) {
      this.giveBack(keyId, own);
      throw error;
    }
    return (status) => {
      shared?.give();
      this.giveBack(keyId, own);
      this.learn(keyId, status);
    };
  }

  private giveBack(keyId: string, own: Slots): void {
    own.give();
    if (own.idle) this.ofKey.delete(keyId);
  }

  /**
   * What an answer says of the key: 401 that it is not valid; a 5xx or 429 nothing (an API that is
   * down, or a gateway or limit before it, answers a made-up key so too); any other that the API
   * read it and let it in (403: valid, without the scope).
   */
  private learn(keyId: string, status: number | undefined): void {
    if (status === undefined || status === 429 || status >= 500) return;
    this.accepted.delete(keyId); // re-inserted: oldest first
    if (status !== 401) this.vouch(keyId);
  }
}
