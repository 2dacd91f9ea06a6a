// Everything a running sandbox holds: the two tenants, the keys and their rate buckets, the faults
// waiting to be injected, the logs of what it saw and carried out, and the timers of campaigns
// being sent. The request pipeline and the route handlers read and change it; startSandbox hands
// parts of it to callers.
import { randomBytes } from 'node:crypto';
import { Bucket } from './bucket.js';
import { seedTenant, type TenantState } from './data.js';
import type { CarriedOut, Fault, KeyOptions, SeenRequest } from './types.js';

export interface KeyRecord {
  label: string;
  tenant: TenantState;
  scopes: Set<string>;
  expiresAt: number;
  revoked: boolean;
  rateLimit: number;
  burst: number;
}

type PendingFault = Fault & { left: number };

export interface StateOptions {
  /** Requests per minute per key; a tenant's bucket holds three times that. */
  rateLimit: number;
  /** Time between a sending campaign's batches. */
  sendStepMs: number;
  extraContacts: number;
  extraTickets: number;
}

export class SandboxState {
  readonly tenants: { A: TenantState; B: TenantState };
  private readonly rateLimit: number;
  private readonly sendStepMs: number;
  private readonly keys = new Map<string, KeyRecord>();
  private readonly keyBuckets = new Map<string, Bucket>();
  private readonly tenantBuckets = new Map<string, Bucket>();
  private readonly faults: PendingFault[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  carried: CarriedOut[] = [];
  seen: SeenRequest[] = [];

  constructor(options: StateOptions) {
    this.tenants = { A: seedTenant('A', options.extraContacts, options.extraTickets), B: seedTenant('B') };
    this.rateLimit = options.rateLimit;
    this.sendStepMs = options.sendStepMs;
  }

  createKey(scopes: readonly string[], options: KeyOptions = {}): string {
    const key = `eng_live_${randomBytes(20).toString('hex')}`;
    this.keys.set(key, {
      label: options.label ?? `custom-${this.keys.size}`,
      tenant: this.tenants[options.tenant ?? 'A'],
      scopes: new Set(scopes),
      expiresAt: options.expiresAt ?? Number.POSITIVE_INFINITY,
      revoked: false,
      rateLimit: options.rateLimit ?? this.rateLimit,
      burst: options.burst ?? options.rateLimit ?? this.rateLimit,
    });
    return key;
  }

  keyRecord(key: string): KeyRecord | undefined {
    return this.keys.get(key);
  }

  revokeKey(key: string): void {
    const record = this.keys.get(key);
    if (record) record.revoked = true;
  }

  /** The key's own bucket and its tenant's, each made on its first request. */
  bucketsFor(presented: string, key: KeyRecord): { keyBucket: Bucket; tenantBucket: Bucket } {
    const keyBucket = this.keyBuckets.get(presented) ?? new Bucket(key.rateLimit, key.burst);
    this.keyBuckets.set(presented, keyBucket);
    const tenantBucket = this.tenantBuckets.get(key.tenant.tenantId) ?? new Bucket(this.rateLimit * 3);
    this.tenantBuckets.set(key.tenant.tenantId, tenantBucket);
    return { keyBucket, tenantBucket };
  }

  injectFault(fault: Fault): void {
    this.faults.push({ ...fault, left: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.splice(0);
  }

  /** The first waiting fault that matches the request, used up once per match. */
  takeFault(operationId: string | null, method: string): Fault | undefined {
    const index = this.faults.findIndex(
      (fault) => (fault.operationId === undefined || fault.operationId === operationId) && (fault.method === undefined || fault.method === method),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index] as PendingFault;
    fault.left -= 1;
    if (fault.left <= 0) this.faults.splice(index, 1);
    return fault;
  }

  /** Runs `step` one send step from now; close() cancels what has not run. */
  afterSendStep(step: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      step();
    }, this.sendStepMs);
    timer.unref();
    this.timers.add(timer);
  }

  cancelTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  clearLogs(): void {
    this.carried = [];
    this.seen = [];
  }
}
