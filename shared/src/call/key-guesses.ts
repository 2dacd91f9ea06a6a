// The model is never shown the key, so arguments holding a window of it (16 characters of a form
// of its secret part, redact.ts) are a guess at it, or the key itself pasted into a chat. No one
// can write such a window without knowing at least 8 of the key's secret characters, so a lock is
// no oracle worth having; it stops the rest: every call made with the key is refused for
// KEY_LOCK_MS (a local server: until it restarts), the answer names no argument, the person is
// told to replace the key, and the operator's log says so.

import { InputError } from '../model/errors.js';
import { keyInArguments } from './outcomes.js';

/** What of a call the lock needs (a ToolCall is one; context.ts names KeyGuesses, so not imported from there). */
interface CallerOf {
  caller: { keyId: string; redact: (text: string) => string; guesses: KeyGuesses; log?: { warn(message: string): void } };
}

/** How long a key stays locked after a call's arguments held a window of it. */
export const KEY_LOCK_MS = 60 * 60 * 1000;
/**
 * How many locks are kept (remote mode takes any key that comes): a live lock is never pushed out
 * by newer ones, so past this many a new lock is not kept (its call is refused all the same).
 */
const LOCKS_KEPT = 100_000;

export class KeyGuesses {
  private readonly locks = new Map<string, number>();

  /**
   * `log`: where a lock is told when the call has no log of its own (stdio). `now`: the monotonic
   * clock by default (a lock lives in memory: a system clock set forward would lift it at once).
   */
  constructor(
    private readonly now: () => number = () => performance.now(),
    readonly log?: { warn(message: string): void },
  ) {}

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

/**
 * Text this server composed from the model's arguments alone (a refusal naming a field path, a
 * preview's statement, whose facts from the API are redacted already) is never redacted for the
 * model to compare: pieces no one argument holds can join into a window of the key, so such text
 * locks the key instead, as a guess in the arguments does.
 */
export function screenComposed(call: CallerOf, text: string): void {
  if (call.caller.redact(text) !== text) lockKey(call);
}

/** Locks the caller's key for a guess at it, and refuses the call, naming no argument. */
export function lockKey(call: CallerOf): never {
  call.caller.guesses.lock(call.caller.keyId);
  (call.caller.log ?? call.caller.guesses.log)?.warn(
    "a call's arguments held a window of the API key (a guess at it, or the key pasted into the chat): every call with this key is refused for an hour; replace the key",
  );
  throw new InputError(keyInArguments());
}
