// How many confirmations (a confirmationToken, or a 2026-07-28 requestState) each key may spend in
// a window, when spent ones are remembered in this process (no Redis). That memory holds at most
// 100,000 (the core's MemorySpentStore, failing closed: a forgotten one could run again), shared by
// every tenant. A preview that reads nothing (a WhatsApp send) gives even a made-up key a token at
// no cost upstream, and bringing one back spends it whatever params come with it, so anyone could
// fill that memory in minutes: every tenant's yes was then refused ("Too many confirmations…").
// Each accepted key now has a share of its own, and keys the API has not accepted one between them.
//
// A share is charged when a value is spent (engines.ts), not when it arrives: counting arrivals
// counted values never issued ("not-a-token"), which cost nothing to send, and a made-up key used up
// the shared allowance with them. At arrival a request is only refused when its bringer's share is
// used, and which key brought each value is noted; the spend charges that key. Requests in flight at
// once all pass the arrival check, so the spend checks again, before the value is spent: past the
// share it is refused there (a tool error, nothing spent), and no share is ever exceeded.
import type { AuthInfo } from '@modelcontextprotocol/server';
import { InputError, issuedIdOf } from '@engage-mcp/shared';
import { refusalResponse } from './respond.js';

export interface ConfirmationBudgetLimits {
  /** Confirmations one key the API accepted may spend per window. */
  perKey: number;
  /** Confirmations all keys the API has not accepted may spend per window, together. */
  unaccepted: number;
}

/** As long as the longest-lived confirmation (a requestState, 10 minutes). */
const WINDOW_MS = 10 * 60 * 1000;
/** Past this many keys' windows, ended ones are dropped (at most once a window). */
const KEYS_BEFORE_SWEEP = 10_000;
/**
 * Values whose bringer is remembered until they are spent; past this the oldest note is dropped. A
 * note lives from its request's arrival to the spend (milliseconds, or a person's answer); one whose
 * value is never spent (not ours, expired) waits to be dropped. Each is under 150 bytes.
 */
const MAX_NOTES = 20_000;
/** Values noted from one request: a call brings one (two at most); the rest are charged as a made-up key's. */
const MAX_NOTES_PER_REQUEST = 4;
/**
 * Notes one key keeps; a newer one drops that key's oldest. A note needs only the shape of our
 * values (any `ct_…`), so without it one tenant's flood of values never spent dropped every other
 * tenant's note, and their spends fell on the allowance of keys not yet accepted.
 */
const MAX_NOTES_PER_KEY = 64;

export const CONFIRMATION_BUDGET: ConfirmationBudgetLimits = { perKey: 2_000, unaccepted: 10_000 };

interface Window {
  count: number;
  since: number;
}

/** Who brought a value: a key the API accepted has its own share; any other key the allowance of all of them. */
interface Bringer {
  keyId: string;
  accepted: boolean;
}

/** A value whose bringer was not noted (dropped, or past a request's few) is charged as a made-up key's. */
const UNKNOWN_BRINGER: Bringer = { keyId: '', accepted: false };

export class ConfirmationBudget {
  private readonly ofKey = new Map<string, Window>();
  private readonly ofUnaccepted: Window = { count: 0, since: 0 };
  /** Who brought each value not yet spent, by the id the spent store knows it by (`token:<nonce>`, `state:<nonce>`). */
  private readonly bringers = new Map<string, Bringer>();
  /** The ids noted for each key, oldest first (MAX_NOTES_PER_KEY). */
  private readonly notedOf = new Map<string, Set<string>>();
  private sweptAt = 0;

  constructor(
    private readonly limits: ConfirmationBudgetLimits,
    private readonly isAccepted: (keyId: string) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** The refusal of a request that brings a confirmation when its key's share is used, or undefined (its values noted). */
  refusal(authInfo: AuthInfo, body: unknown): Response | undefined {
    const ids = confirmationIdsIn(body);
    if (ids === undefined) return undefined;
    const keyId = (authInfo.clientId ?? '').split(':')[0] as string;
    const bringer = { keyId, accepted: this.isAccepted(keyId) };
    const { window, limit } = this.shareOf(bringer);
    if (window.count >= limit) return refusalResponse(overBudget(limit, bringer.accepted, window.since + WINDOW_MS - this.now()));
    // A key not accepted is charged as an unknown bringer is: noting its values changes nothing, and
    // they are anyone's to send at no cost (a made-up key's flood dropped the notes of tenants).
    if (bringer.accepted) for (const id of ids.slice(0, MAX_NOTES_PER_REQUEST)) this.note(id, bringer);
    return undefined;
  }

  /**
   * Charges the share of the key that brought the value `id`, just before it is spent. Throws (an
   * answer, nothing spent) when that share is used: requests in flight at once passed the arrival
   * check together. Returns how to give the charge back, for a value that was not spent after all.
   */
  chargeSpend(id: string): () => void {
    const bringer = this.bringers.get(id) ?? UNKNOWN_BRINGER;
    this.forget(id);
    const { window, limit } = this.shareOf(bringer);
    if (window.count >= limit) throw new InputError(overBudget(limit, bringer.accepted, window.since + WINDOW_MS - this.now()).message);
    window.count++;
    const since = window.since;
    return () => {
      if (window.since === since && window.count > 0) window.count--;
    };
  }

  private note(id: string, bringer: Bringer): void {
    this.forget(id);
    let noted = this.notedOf.get(bringer.keyId);
    if (!noted) this.notedOf.set(bringer.keyId, (noted = new Set()));
    if (noted.size >= MAX_NOTES_PER_KEY) this.forget(noted.values().next().value as string);
    if (this.bringers.size >= MAX_NOTES) this.forget(this.bringers.keys().next().value as string);
    this.bringers.set(id, bringer);
    noted.add(id);
  }

  private forget(id: string): void {
    const bringer = this.bringers.get(id);
    if (!bringer) return;
    this.bringers.delete(id);
    const noted = this.notedOf.get(bringer.keyId);
    noted?.delete(id);
    if (noted?.size === 0) this.notedOf.delete(bringer.keyId);
  }

  /** The bringer's window (begun again once a window has passed) and limit. */
  private shareOf(bringer: Bringer): { window: Window; limit: number } {
    const window = bringer.accepted ? this.windowOf(bringer.keyId) : this.ofUnaccepted;
    const now = this.now();
    if (Math.abs(now - window.since) >= WINDOW_MS) Object.assign(window, { count: 0, since: now });
    return { window, limit: bringer.accepted ? this.limits.perKey : this.limits.unaccepted };
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

/**
 * The ids of the values a body's tools/calls bring (a confirmationToken, a 2026-07-28 requestState),
 * as the spent store knows them; undefined when it brings none. One not shaped like ours is never
 * spent, so it is not noted (the request still waits on a used share).
 */
function confirmationIdsIn(body: unknown): string[] | undefined {
  let brings = false;
  const ids: string[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params } = (typeof message === 'object' && message !== null ? message : {}) as { method?: unknown; params?: Record<string, unknown> };
    if (method !== 'tools/call' || typeof params !== 'object' || params === null) continue;
    const brought = { token: (params.arguments as { confirmationToken?: unknown } | undefined)?.confirmationToken, state: params.requestState };
    for (const kind of ['token', 'state'] as const) {
      const value = brought[kind];
      if (typeof value !== 'string') continue;
      brings = true;
      const id = issuedIdOf(kind, value);
      if (id) ids.push(id);
    }
  }
  return brings ? ids : undefined;
}

/**
 * The refusal. Keys the API has not accepted share one allowance that made-up keys can use up (with
 * values they spend: a WhatsApp send's preview gives them tokens), and a tenant's key is among them until this
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
    message: `${limit} confirmations were already spent ${whose} in the last ${WINDOW_MS / 60_000} minutes: nothing was run. Try again in ${seconds} s.${wayOut}`,
    headers: { 'retry-after': String(seconds) },
  };
}
