// The guardrails' state of a service without Redis (one replica): the core's memory store, bounded.
// Remote mode takes any key that comes, made-up ones too, so what its calls leave behind must not
// grow for the life of the process: every write that reaches an end (a 401 for a made-up key, a
// cap's refusal sent nowhere) adds an audit line, every send under a daily cap its key's counter,
// and the core's store kept every line, and every expired counter and idempotency record nobody
// looked up again, until the process ran out of memory for every tenant. Nothing reads this record
// (it is gone at a restart; Redis keeps the one `engage-mcp-audit verify --remote` checks), so only
// its latest lines are kept.
import type { AuditEntry } from '@engage-mcp/shared';
import { MemoryGuardStore } from '@engage-mcp/shared';

/** Audit lines kept (about 450 bytes each): the latest, the chain verifiable from the first kept. */
export const MEMORY_AUDIT_LINES = 1_000;
/** How often, at most, expired counters and idempotency records are swept (on the next write's use of the store). */
const SWEEP_EVERY_MS = 60_000;

export class ServiceMemoryGuardStore extends MemoryGuardStore {
  private sweptAt: number;

  constructor(
    private readonly clock: () => number = () => Date.now(),
    private readonly auditLinesKept = MEMORY_AUDIT_LINES,
  ) {
    super(clock);
    this.sweptAt = clock();
  }

  override async appendAudit(entry: AuditEntry): Promise<void> {
    await super.appendAudit(entry);
    const excess = this.auditLines.length - this.auditLinesKept;
    if (excess > 0) this.auditLines.splice(0, excess);
  }

  override async take(counter: string, amount: number, cap: number, expiresAt: number) {
    this.sweep();
    return super.take(counter, amount, cap, expiresAt);
  }

  /**
   * A counter given back to nothing is forgotten (a missing one counts 0): else a send the API
   * refused (a made-up key's 401) left its key's day counter for 26 hours, one per made-up key.
   */
  override async giveBack(counter: string, amount: number) {
    await super.giveBack(counter, amount);
    if (this.counters.get(counter)?.value === 0) this.counters.delete(counter);
  }

  override async reserve(...args: Parameters<MemoryGuardStore['reserve']>) {
    this.sweep();
    return super.reserve(...args);
  }

  /** Forgets what expired: the core's store drops an entry only when it is looked up again. */
  private sweep(): void {
    const now = this.clock();
    if (Math.abs(now - this.sweptAt) < SWEEP_EVERY_MS) return;
    this.sweptAt = now;
    for (const map of [this.counters, this.records] as Array<Map<string, { expiresAt: number }>>)
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
  }
}
