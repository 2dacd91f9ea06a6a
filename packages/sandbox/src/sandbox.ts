// The sandbox: a local implementation of the whole Tenant Messaging and Engagement API, on
// loopback only. Tenants, scoped and expiring keys, the envelope, RateLimit headers and 429s,
// campaign and ticket state, quota, 4xx for bad input, fault injection, and a record of what it
// carried out. It follows the spec, not our servers: it shares no code with them.
//
// Where things are: state.ts holds what a running sandbox knows (tenants, keys, rate buckets,
// faults, logs); pipeline.ts takes one request through its checks in order; router.ts is the route
// table, and routes/<domain>.ts each endpoint's behaviour; faults.ts answers injected faults;
// data.ts seeds the tenants; server.ts is the HTTP server.
import type { TenantState } from './data.js';
import { serve } from './server.js';
import { SandboxState } from './state.js';
import type { CarriedOut, Fault, KeyOptions, SandboxKeys, SeenRequest } from './types.js';

export type { CarriedOut, Fault, FaultKind, KeyOptions, SandboxKeys, SeenRequest } from './types.js';

export const ALL_SCOPES = [
  'contact.read',
  'contact.manage',
  'contact.delete',
  'campaign.read',
  'campaign.manage',
  'campaign.send',
  'campaign.control',
  'inbox.read',
  'inbox.manage',
  'inbox.reply',
  'channel.read',
  'product.read',
  'product.manage',
  'billing.read',
  'quota.read',
  'tenant.setting.read',
  'tenant.read',
];
export const READ_SCOPES = ALL_SCOPES.filter((scope) => scope.endsWith('.read'));

export interface SandboxOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Requests per minute per key (default 6000). The tenant's bucket holds three times that. */
  rateLimit?: number;
  /** More generated contacts for tenant A, for paging and size tests. */
  extraContacts?: number;
  /** More generated tickets for tenant A, for size tests. */
  extraTickets?: number;
  /** Time between a sending campaign's batches (default 400 ms; it completes in 4 batches). */
  sendStepMs?: number;
}

export interface Sandbox {
  baseUrl: string;
  port: number;
  keys: SandboxKeys;
  /** Mints a key with the given scopes for tenant A (or B); rateLimit per minute, burst the bucket's size (default: rateLimit). */
  createKey(scopes: readonly string[], options?: KeyOptions): string;
  /** Revokes a key, as its holder would in the tenant console: it is refused with 401 from now on. */
  revokeKey(key: string): void;
  injectFault(fault: Fault): void;
  clearFaults(): void;
  /** Every mutating operation carried out, once, in order. */
  carriedOut(): CarriedOut[];
  requests(): SeenRequest[];
  clearLogs(): void;
  tenant(which: 'A' | 'B'): TenantState;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const state = new SandboxState({
    rateLimit: options.rateLimit ?? 6000,
    sendStepMs: options.sendStepMs ?? 400,
    extraContacts: options.extraContacts ?? 0,
    extraTickets: options.extraTickets ?? 0,
  });
  const keys = standardKeys(state);
  const listening = await serve(state, options.port ?? 0);
  return {
    baseUrl: `http://127.0.0.1:${listening.port}`,
    port: listening.port,
    keys,
    createKey: (scopes, keyOptions) => state.createKey(scopes, keyOptions),
    revokeKey: (key) => state.revokeKey(key),
    injectFault: (fault) => state.injectFault(fault),
    clearFaults: () => state.clearFaults(),
    carriedOut: () => [...state.carried],
    requests: () => [...state.seen],
    clearLogs: () => state.clearLogs(),
    tenant: (which) => state.tenants[which],
    close: () => listening.close(),
  };
}

/** The keys every sandbox starts with, one of each kind a test needs. */
function standardKeys(state: SandboxState): SandboxKeys {
  const keys: SandboxKeys = {
    full: state.createKey(ALL_SCOPES, { label: 'full' }),
    readOnly: state.createKey(READ_SCOPES, { label: 'readOnly' }),
    expired: state.createKey(ALL_SCOPES, { label: 'expired', expiresAt: Date.now() - 86_400_000 }),
    revoked: state.createKey(ALL_SCOPES, { label: 'revoked' }),
    otherTenant: state.createKey(ALL_SCOPES, { label: 'otherTenant', tenant: 'B' }),
  };
  state.revokeKey(keys.revoked);
  return keys;
}
