// The model is never shown the key, so arguments holding it (or a part of it, in any form) are a
// guess at it. Refusing such a call tells the model its guess was right: a part of the key grown a
// character at a time would spell the whole key out within a few dozen calls. So the first such
// call locks the key: every call made with it is refused for LOCK_MS (a local server: until it
// restarts), and the answer names no field. What a lock costs is one tenant's calls for an hour,
// on the word of a model that held the key: the person is told to replace it.

import { InputError } from '../model/errors.js';
import { keyInArguments } from './outcomes.js';

/** What of a call the lock needs (a ToolCall is one; context.ts names KeyGuesses, so not imported from there). */
interface CallerOf {
  caller: { keyId: string; redact: (text: string) => string; guesses: KeyGuesses; log?: { warn(message: string): void } };
}

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
  call.caller.log?.warn("a call's arguments held a part of the API key: the key is locked for an hour");
  throw new InputError(keyInArguments());
}
