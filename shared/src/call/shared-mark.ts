// The claim's mark in the store every replica shares (remote mode on Redis; the stdio servers'
// state directory): each write is checked against the same write's last attempt on any replica
// (a confirmed one: in flight, or sent since its yes; one needing no yes: in flight) and marked in
// flight in one atomic step of the store. The mark has an owner (a random id): only its own attempt settles it,
// and while the write is at the API its replica renews it, so a mark counts as an unknown outcome
// only when its replica stopped renewing it (it stopped), never while a slow write is still out.
// How each spent confirmation's use ended is noted there too, so a replay on any replica is
// answered truly (carried out, or nothing carried out) rather than "unknown".
import { randomBytes } from 'node:crypto';
import { InputError } from '../model/errors.js';
import type { CallDeps, ToolCall } from './context.js';
import type { AuditEntry } from './audit.js';
import { type PendingAudit, SettleOwed } from './guard-store.js';
import type { Attempt } from './journal.js';
import { writeDigest } from './journal.js';
import type { Operation, Params } from '../model/types.js';

/** How often a replica renews the marks of its writes at the API. */
export const WRITE_MARK_RENEW_MS = 60_000;
/** A mark not renewed for this long is an unknown outcome: its replica stopped with the write out. */
export const WRITE_MARK_LEASE_MS = 3 * WRITE_MARK_RENEW_MS;
/** The yes of a write that needs none: later than any attempt, so only the same write in flight refuses it. */
export const NO_YES = Number.MAX_SAFE_INTEGER;

/**
 * Not renewed for this long (by the system or the monotonic clock: the process was paused, the
 * machine slept), the owner asks the store whether its mark is still its own before it sends.
 */
const RECHECK_AFTER_MS = WRITE_MARK_RENEW_MS / 2;
/** Settling is tried this many times: a mark left in flight would say "still being sent" until its lease ends. */
const SETTLE_TRIES = 3;

export interface SharedMark {
  write: string;
  id: string;
  /** When it was marked, and the confirmation whose yes sends it: how the write ends is noted for that confirmation too. */
  at: number;
  confirmation?: string;
  renewing: ReturnType<typeof setInterval>;
  /** When the store last took its renewal (or the claim), by the system clock and by the monotonic one. */
  renewed: { at: number; steady: number };
  /** A yes sent it (given, or by a token); else it needs none, and the store is a help rather than a condition. */
  needsYes: boolean;
  /** Settled as carried out with its answer unread, and the store took that: the answer kept for the repeat takes the note first. */
  unreadNoted?: boolean;
  /** Its audit line but for the outcome, as its claim kept it with the mark. */
  audit?: PendingAudit;
  /** The store appended its audit line in the settle's own step: the call appends none after (guardrails.ts afterWrite). */
  audited?: boolean;
}

/**
 * The owner's mark was taken over by another server while this one waited to send the write (a
 * pause past the lease made it read as stopped): this call did not send it. Its message is the
 * whole answer, as an InputError's is: nothing was sent by this call.
 */
export class MarkTakenOver extends InputError {}

/**
 * Checks and marks the write in the shared store, if there is one: `refusedBy` the attempt that
 * refuses it (in flight, or sent since `approvedAt`), else the mark. `at` is the local journal's
 * time of the same mark, so this server compares the two as one. A store that does not answer
 * throws (nothing is sent); a mark it may have made all the same is taken back, best effort.
 * `audit`: the write's line but for its outcome, kept with the mark until it is settled.
 */
export async function markShared(
  deps: CallDeps,
  call: ToolCall,
  op: Operation,
  params: Params,
  approval: { approvedAt: number; confirmation?: string },
  at: number,
  audit?: PendingAudit,
): Promise<{ refusedBy?: Attempt; mark?: SharedMark; replaced?: { attempt?: Attempt } }> {
  const store = deps.guard.store();
  if (!store.claimWrite) return {};
  const write = writeDigest(call.caller.keyId, op.id, params);
  const id = randomBytes(12).toString('base64url');
  try {
    const refusedBy = await store.claimWrite(write, id, approval.approvedAt, at, Date.now(), audit);
    traceClaim(deps, op, write, id, approval.approvedAt, at, refusedBy);
    if (refusedBy) return { refusedBy };
  } catch (error) {
    await store.settleWrite?.(write, id, 'refused').catch(() => undefined);
    throw error;
  }
  const renewed = { at: Date.now(), steady: performance.now() };
  const renewing = setInterval(() => {
    const asked = { at: Date.now(), steady: performance.now() };
    store
      .renewWrite?.(write, id, asked.at)
      .then((ours) => ours && Object.assign(renewed, asked))
      .catch((error: unknown) => deps.log.warn(`the shared mark of ${op.id} was not renewed: ${messageOf(error)}`));
  }, WRITE_MARK_RENEW_MS);
  renewing.unref();
  const needsYes = approval.approvedAt !== NO_YES;
  // Read back only for a write that needs no yes: its answer tells of the attempt before it (stages.ts claim). `replaced`
  // is left out where the store does not say (no such method, or no answer); `{}` is its word that the claim replaced none.
  const replaced =
    needsYes || !store.claimedOver
      ? undefined
      : await store.claimedOver(write, id).then(
          (over) => (over ? { attempt: fromSharedStore(call, over) } : {}),
          () => undefined,
        );
  return {
    ...(replaced ? { replaced } : {}),
    mark: {
      write,
      id,
      at,
      ...(approval.confirmation ? { confirmation: approval.confirmation } : {}),
      renewing,
      renewed,
      needsYes,
      ...(audit ? { audit } : {}),
    },
  };
}

/** At debug level, what each claim read and did (pid and times by this process's clock): how a write sent twice is traced. */
function traceClaim(deps: CallDeps, op: Operation, write: string, id: string, approvedAt: number, at: number, refusedBy: Attempt | undefined): void {
  const yes = approvedAt === NO_YES ? 'none needed' : String(approvedAt);
  const did = refusedBy ? `refused by ${refusedBy.outcome} of ${refusedBy.at}` : 'marked in flight';
  deps.log.debug(`claim ${op.id} write ${write.slice(0, 12)} mark ${id} pid ${process.pid} yes ${yes} at ${at} now ${Date.now()}: ${did}`);
}

/**
 * Before each attempt of a marked write: a mark not renewed for RECHECK_AFTER_MS (a long wait, or
 * the process paused) is renewed first, and a mark another server has taken over meanwhile (its
 * lease ran out, so the write read as stopped, and another send went ahead) throws MarkTakenOver:
 * this one is not sent. A store that does not answer refuses a write that needed a yes, as the
 * claim does; one that needs none goes on, as it would have without its mark.
 */
export async function checkStillOwned(deps: CallDeps, op: Operation, mark: SharedMark): Promise<void> {
  const asked = { at: Date.now(), steady: performance.now() };
  if (asked.at - mark.renewed.at < RECHECK_AFTER_MS && asked.steady - mark.renewed.steady < RECHECK_AFTER_MS) return;
  let ours: boolean | undefined;
  try {
    ours = await deps.guard.store().renewWrite?.(mark.write, mark.id, asked.at);
  } catch (error) {
    if (mark.needsYes) throw new MarkTakenOver(storeSilentBeforeSend(op, mark, messageOf(error)));
    deps.log.warn(`${op.id}: the shared store did not answer before its send (${messageOf(error)}); it goes on, as it would without its mark`);
    return;
  }
  if (ours === false) {
    deps.log.warn(`${op.id}: its mark was taken over by another server while this one waited to send it; not sent`);
    throw new MarkTakenOver(takenOver(op, mark));
  }
  Object.assign(mark.renewed, asked);
}

function takenOver(op: Operation, mark: SharedMark): string {
  const again = mark.confirmation
    ? ' Its yes is spent: if it did not go out and the user still wants it, call again without a confirmationToken (the user is shown a new preview).'
    : ' If it did not go out and the user still wants it, call again.';
  return `${op.id} was not sent by this call. This server waited to send it (a rate limit, or the server was paused) for longer than its 3-minute mark in flight lasts, and meanwhile another server sharing its state (or another replica) took the same write over, so it may already have gone out from there. Check whether it went out before doing anything else.${again}`;
}

/** Its yes was spent on this call (a token, or a yes given by a question): "try again" is a call without it. */
function storeSilentBeforeSend(op: Operation, mark: SharedMark, why: string): string {
  const again = mark.confirmation
    ? ' Its yes is spent: to try again in a moment, call without a confirmationToken (the user is shown a new preview).'
    : ' Try again in a moment.';
  return `${op.id} was not sent: after a long wait to send it, this server could not check with the shared state store that no other server had taken the same write over (${why}). Nothing was sent by this call.${again}`;
}

/**
 * How the marked write ended, told to the shared store (tried SETTLE_TRIES times; a failure is
 * logged, and the lease ends the mark). `unread`: its host had gone by its answer; noted for a
 * write that needs no yes, so the same write asked on any server sharing the store is told, once.
 */
export async function settleShared(
  deps: CallDeps,
  mark: SharedMark | undefined,
  outcome: 'done' | 'unknown' | 'refused',
  { unread = false, apiStatus }: { unread?: boolean; apiStatus?: number } = {},
): Promise<void> {
  if (!mark) return;
  // A write that went out (or may have) has its line appended with the settle where the store can: no moment between them
  // in which a server killed leaves the write with no line at all.
  const line: AuditEntry | undefined =
    mark.audit && outcome !== 'refused'
      ? { ...mark.audit, time: new Date(deps.guard.now()).toISOString(), outcome, ...(apiStatus !== undefined ? { apiStatus } : {}) }
      : undefined;
  clearInterval(mark.renewing);
  deps.log.debug(`settle write ${mark.write.slice(0, 12)} mark ${mark.id} pid ${process.pid} now ${Date.now()}: ${outcome}`);
  const store = deps.guard.store();
  const noted = unread && outcome === 'done' && !mark.needsYes;
  for (let tries = 1; ; tries++) {
    try {
      const audited = await store.settleWrite?.(mark.write, mark.id, outcome, noted, ...(line && !mark.audited ? [line] : []));
      if (audited === true) mark.audited = true;
      if (noted && store.takeUnread) mark.unreadNoted = true;
      if (mark.confirmation) await noteSharedConfirmation(deps, mark.confirmation, { at: mark.at, outcome });
      return;
    } catch (error) {
      // The store keeps the settle with its line, to make once it answers: the line is its to append now, not the call's
      // (tried again below without it, the settle goes; the store's later one then appends the line alone).
      if (error instanceof SettleOwed) mark.audited = true;
      if (tries >= SETTLE_TRIES) {
        deps.log.warn(`the shared journal did not take a write's outcome (${outcome}): ${messageOf(error)}`);
        return;
      }
    }
  }
}

/**
 * The unread note of a write whose answer this server kept, taken from the shared store: false when
 * another server's repeat took it (that one was told, so this one is sent), or the write went out
 * again since. A store that does not answer leaves the kept answer to be given (logged).
 */
export async function takeSharedUnread(deps: CallDeps, call: ToolCall, op: Operation, params: Params): Promise<boolean> {
  const store = deps.guard.store();
  if (!store.takeUnread) return true;
  return store.takeUnread(writeDigest(call.caller.keyId, op.id, params)).catch((error: unknown) => {
    deps.log.warn(`the shared store did not answer for the unread note of ${op.id} (${messageOf(error)}): its kept answer is given`);
    return true;
  });
}

/**
 * How a confirmation's use ended, told to the shared store, for a replay on another replica (best
 * effort: without it, that replica says the outcome is unknown, which sends nothing either).
 */
export async function noteSharedConfirmation(deps: CallDeps, confirmation: string, attempt: Attempt): Promise<void> {
  await deps.guard
    .store()
    .noteConfirmation?.(confirmation, attempt)
    .catch((error: unknown) => deps.log.warn(`the shared store did not take how a confirmation ended (${attempt.outcome}): ${messageOf(error)}`));
}

/** How a spent confirmation's use ended: this replica's journal, else the shared store's note (none: unknown). */
export async function spentOutcome(deps: CallDeps, call: ToolCall, confirmation: string): Promise<Attempt | undefined> {
  const local = call.caller.journal.outcomeOf(confirmation);
  if (local) return local;
  return deps.guard
    .store()
    .confirmationOutcome?.(confirmation)
    .catch(() => undefined);
}

/**
 * An attempt read from the store other servers share (remote mode's Redis, the stdio servers'
 * state directory): it may be this server's own or another's, and the record does not say which,
 * so the answers name both, true either way.
 */
export function fromSharedStore(call: ToolCall, attempt: Attempt): Attempt {
  const by = call.caller.credentials
    ? 'a replica of this service (this one or another)'
    : 'this server or another one sharing its state directory (another host, or before a restart)';
  return { ...attempt, by };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
