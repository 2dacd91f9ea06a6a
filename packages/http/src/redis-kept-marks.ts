// The marks this replica made in Redis (writes in flight, and writes that went out within the half
// hour a mark is kept), remembered here too, so that when Redis loses what it held (restarted
// empty, flushed, failed over to a replica that lagged) they are put back and another replica does
// not send the same write again. Bounded; times of marks are Redis's clock's.

/** Marks remembered at most: beyond, the oldest that ended goes first (then the oldest in flight). */
const KEPT_MARKS = 10_000;

export interface KeptMark {
  /** When it was marked, by Redis's clock (ms). */
  at: number;
  outcome: 'in-flight' | 'done' | 'unknown';
  owner: string;
  /** Until when it is kept (performance.now()): a mark in flight until it ends; an ended one for `memoryMs` after. */
  keptUntil: number;
  /** Done with its answer never read, and no claim or kept answer of this replica's has told of it yet: put back with the note. */
  unread?: boolean;
  /** Its unread note was taken here: put back as told, so the note another replica puts back for it is dropped. */
  told?: boolean;
  /** In flight: the audit line but for its outcome that its claim kept with it (JSON), put back with it. */
  audit?: string;
}

export class KeptMarks {
  private readonly marks = new Map<string, KeptMark>();

  constructor(private readonly memoryMs: number) {}

  marked(write: string, owner: string, at: number, audit?: string): void {
    this.marks.delete(write);
    this.marks.set(write, { at, outcome: 'in-flight', owner, keptUntil: Number.POSITIVE_INFINITY, ...(audit ? { audit } : {}) });
    if (this.marks.size > KEPT_MARKS) this.forgetOne();
  }

  /** The owner's mark ended: one refused did nothing (forgotten), another is kept its memory's time (`unread`: its answer never read). */
  settled(write: string, owner: string, outcome: 'done' | 'unknown' | 'refused', unread = false): void {
    const mark = this.marks.get(write);
    if (!mark || mark.owner !== owner) return;
    if (outcome === 'refused') this.marks.delete(write);
    else Object.assign(mark, { outcome, keptUntil: performance.now() + this.memoryMs, unread: unread && outcome === 'done', audit: undefined });
  }

  /**
   * The write's unread note was taken here (told, or its kept answer given): a mark put back holds
   * it no more. `taken`: the attempt whose note a claim here took (Redis's clock, its settling
   * replica's id), remembered if this replica keeps nothing as late, so that it is put back told.
   */
  told(write: string, taken?: { at: number; owner: string }): void {
    const mark = this.marks.get(write);
    if (mark && (!taken || mark.at >= taken.at)) return void Object.assign(mark, { unread: false, told: true });
    if (!taken) return;
    this.marks.delete(write);
    this.marks.set(write, { ...taken, outcome: 'done', keptUntil: performance.now() + this.memoryMs, told: true });
    if (this.marks.size > KEPT_MARKS) this.forgetOne();
  }

  /** How many marks are held, some perhaps past their keeping (kept() drops those). */
  get size(): number {
    return this.marks.size;
  }

  /** The marks still kept, by write. */
  kept(): Array<[string, KeptMark]> {
    const now = performance.now();
    for (const [write, mark] of this.marks) if (mark.keptUntil <= now) this.marks.delete(write);
    return [...this.marks];
  }

  private forgetOne(): void {
    for (const [write, mark] of this.marks) {
      if (mark.outcome !== 'in-flight') return void this.marks.delete(write);
    }
    this.marks.delete(this.marks.keys().next().value as string);
  }
}
