// How many confirmations (a confirmationToken, or a 2026-07-28 requestState) each key may bring in
// a window, when spent ones are remembered in this process (no Redis). That memory holds at most
// 100,000 (the core's MemorySpentStore, failing closed: a forgotten one could run again), shared by
// every tenant. A preview that reads nothing (a WhatsApp send) gives even a made-up key a token at
// no cost upstream, and bringing one back spends it whatever params come with it, so anyone could
// fill that memory in minutes: every tenant's yes was then refused ("Too many confirmations…").
// Each accepted key now has a share of its own, and keys the API has not accepted one between them.
import type { AuthInfo } from '@modelcontextprotocol/server';
import { refusalResponse } from './respond.js';

export interface ConfirmationBudgetLimits {
  /** Confirmations one key the API accepted may bring per window. */
  perKey: number;
  /** Confirmations all keys the API has not accepted may bring per window, together. */
  unaccepted: number;
}

/** As long as the longest-lived confirmation (a requestState, 10 minutes). */
const WINDOW_MS = 10 * 60 * 1000;
/** Past this many keys' windows, ended ones are dropped (at most once a window). */
const KEYS_BEFORE_SWEEP = 10_000;

export const CONFIRMATION_BUDGET: ConfirmationBudgetLimits = { perKey: 2_000, unaccepted: 10_000 };

interface Window {
  count: number;
  since: number;
}

export class ConfirmationBudget {
  private readonly ofKey = new Map<string, Window>();
  private readonly ofUnaccepted: Window = { count: 0, since: 0 };
  private sweptAt = 0;

  constructor(
    private readonly limits: ConfirmationBudgetLimits,
    private readonly isAccepted: (keyId: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** The refusal of a request that brings a confirmation over its key's share, or undefined (counted). */
  refusal(authInfo: AuthInfo, body: unknown): Response | undefined {
    if (!bringsConfirmation(body)) return undefined;
    const keyId = (authInfo.clientId ?? '').split(':')[0] as string;
    const accepted = this.isAccepted(keyId);
    const window = accepted ? this.windowOf(keyId) : this.ofUnaccepted;
    const now = this.now();
    if (Math.abs(now - window.since) >= WINDOW_MS) Object.assign(window, { count: 0, since: now });
    const limit = accepted ? this.limits.perKey : this.limits.unaccepted;
    if (window.count >= limit) return refusalResponse(overBudget(limit, accepted, window.since + WINDOW_MS - now));
    window.count++;
    return undefined;
  }

  private windowOf(keyId: string): Window {
    let window = this.ofKey.get(keyId);
    if (window) return window;
    const now = this.now();
    if (this.ofKey.size >= KEYS_BEFORE_SWEEP && Math.abs(now - this.sweptAt) >= WINDOW_MS) {
      this.sweptAt = now;
      for (const [id, each] of this.ofKey) if (Math.abs(now - each.since) >= WINDOW_MS) this.ofKey.delete(id);
    }
    window = { count: 0, since: now };
    this.ofKey.set(keyId, window);
    return window;
  }
}

/** A tools/call that brings a confirmationToken, or a 2026-07-28 repeat with our requestState. */
function bringsConfirmation(body: unknown): boolean {
  const { method, params } = (typeof body === 'object' && body !== null ? body : {}) as { method?: unknown; params?: Record<string, unknown> };
  if (method !== 'tools/call' || typeof params !== 'object' || params === null) return false;
  const args = params.arguments as { confirmationToken?: unknown } | undefined;
  return typeof params.requestState === 'string' || typeof args?.confirmationToken === 'string';
}

/**
 * The refusal. Keys the API has not accepted share one allowance that anyone can use up (a made-up
 * key's values are counted before they are checked), and a tenant's key is among them until this
 * service has seen the API answer it: a preview that reads nothing (a WhatsApp send's) leaves it
 * there. One read with the key moves it to a share of its own, which the refusal says.
 */
function overBudget(limit: number, accepted: boolean, waitMs: number) {
  const whose = accepted ? 'with this API key' : 'with API keys the API has not accepted yet (all together: keys this service has not yet seen the API answer)';
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const wayOut = accepted
    ? ''
    : ' If this key is valid, make one read with it first (any tool that reads from the API): a key the API has answered has a share of its own, and the same confirmation can then be brought again.';
  return {
    status: 429,
    error: 'too_many_confirmations',
    message: `More than ${limit} requests bringing a confirmation came ${whose} in the last ${WINDOW_MS / 60_000} minutes: nothing was run. Try again in ${seconds} s.${wayOut}`,
    headers: { 'retry-after': String(seconds) },
  };
}
