// The sandbox's public shapes that its parts share: faults to inject, what it records, its keys.
// Exported to callers through sandbox.ts (and index.ts); kept here so the parts need not import
// the module that assembles them.

export type FaultKind =
  | 'delay' // wait delayMs, then answer normally
  | 'status' // answer `status` with an envelope; the work is done only with afterWork
  | 'html' // answer `status` (default 502) with an HTML page; the work is done only with afterWork
  | 'reset-before' // drop the connection before doing anything
  | 'reset-after' // do the work, then drop the connection without answering
  | 'truncated' // do the work, answer 200 with a cut-off JSON body
  | 'not-envelope' // do the work, answer 200 with JSON that is not the envelope
  | 'slow-body' // do the work, send headers, then trickle the body over delayMs
  | 'rate-limit' // answer 429 with Retry-After: retryAfter; nothing is done
  | 'redirect'; // answer 302 to another origin; nothing is done

export interface Fault {
  kind: FaultKind;
  /** Which requests: an operationId, and/or a method. Omitted: any API request. */
  operationId?: string;
  method?: string;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  delayMs?: number;
  status?: number;
  retryAfter?: string;
  afterWork?: boolean;
  /** The envelope's message of a 'status' fault (default "injected failure"). */
  message?: string;
}

export interface CarriedOut {
  operationId: string;
  tenantId: string;
  /** Path parameters as the sandbox decoded them, plus the body. */
  params: Record<string, unknown>;
  at: number;
}

export interface SeenRequest {
  method: string;
  path: string;
  /** The route the sandbox matched, or null when none did. */
  operationId: string | null;
  status: number;
  keyLabel?: string;
}

export interface SandboxKeys {
  full: string;
  readOnly: string;
  expired: string;
  revoked: string;
  otherTenant: string;
  [label: string]: string;
}

/** How a minted key differs from the default: its tenant, label, expiry, and rate (per minute) and burst (the bucket's size). */
export interface KeyOptions {
  tenant?: 'A' | 'B';
  label?: string;
  expiresAt?: number;
  rateLimit?: number;
  burst?: number;
}
