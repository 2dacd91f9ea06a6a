// The stages of a tool call, in order: screen → resolve → prepare → gate → confirm (confirm.ts) → claim →
// send → answer. Each is a plain function; tool-call.ts runs them. The owner's guardrails hook in
// here and in tool-call.ts (guardrails.ts).
import { InputError, UpstreamError } from '../model/errors.js';
import { buildRequest } from '../model/paths.js';
import type { Operation, Params } from '../model/types.js';
import { listBodyReaderFor } from '../upstream/body-reader.js';
import { alreadyRedacted, readAnswer } from './answers.js';
import { LOOKUP_BUDGET_MS, lastSentOf, lookupReader, type Approval } from './confirm.js';
import { claimGuardrails, pendingAudit, releaseHoldings, type Holdings } from './guardrails.js';
import type { CallDeps, Reply, ToolCall } from './context.js';
import { ClaimsPaused } from './guard-store.js';
import type { Attempt } from './journal.js';
import { lockKey, screenComposed } from './key-guesses.js';
import {
  carriedOut,
  keyLocked,
  neverReadElsewhere,
  notGranted,
  outcomeOfFailure,
  refusedAfterToken,
  sentSince,
  stillRunning,
  stoppedBeforeSend,
} from './outcomes.js';
import { checkStillOwned, fromSharedStore, markShared, NO_YES, settleShared, type SharedMark } from './shared-mark.js';
import { answerUnread } from './undelivered.js';
import { validateParams } from './validate.js';

export interface Prepared {
  op: Operation;
  params: Params;
  request: { path: string; body?: Params };
  /** A confirmed write's mark in the store the replicas share, once claimed (shared-mark.ts). */
  mark?: SharedMark;
  /** A write that needs no yes, sent again after its earlier attempt (on any server sharing the store) was carried out or ended unknown: its answer says so. */
  earlierSent?: Attempt;
}

/**
 * screen: the model was never shown the key, so arguments holding a window of it (any form, any
 * argument, operationId and field names included) are a guess at it. The first such call locks
 * the key (key-guesses.ts) before any stage could answer differently for a right guess; a locked
 * key's calls are refused. One scan of the arguments' JSON: no form runs across its punctuation.
 */
export function screen(call: ToolCall): void {
  const { caller } = call;
  if (caller.guesses.locked(caller.keyId)) throw new InputError(keyLocked());
  if (jsonHoldsKey(JSON.stringify(call.args) ?? '', caller.redact)) lockKey(call);
}

/** Whether a JSON text holds a form of the key (one scan; no form runs across JSON's punctuation). */
function jsonHoldsKey(json: string, redact: ToolCall['caller']['redact']): boolean {
  return redact.clearsJson ? !redact.clearsJson(json) : redact(json) !== json;
}

/** resolve: the operation the call names, from the catalog (loaded on the first call). */
export async function resolve(deps: CallDeps, call: ToolCall): Promise<{ op: Operation; siblings: readonly Operation[] }> {
  const { operations } = await deps.catalog();
  const op = operations.find((candidate) => candidate.id === call.args.operationId);
  if (!op) {
    const unknown = `operationId ${call.args.operationId} is not in the catalog.`;
    screenComposed(call, unknown);
    throw new InputError(unknown);
  }
  if (call.caller.grantedScopes && !call.caller.grantedScopes.has(op.scope)) throw new InputError(notGranted(op));
  return { op, siblings: operations };
}

/**
 * prepare: params validated (never the key in any form), the request built. The model's other
 * text (idempotencyKey, fields, search) is held to the same rule; screen has found nothing of the
 * key in any of it already, and a string it could not see into locks the key the same way. A
 * failure here means nothing was sent.
 */
export function prepare(call: ToolCall, op: Operation, siblings: readonly Operation[]): Prepared {
  const { caller, args } = call;
  let guessed = false;
  const holdsKey = (text: string) => {
    const holds = caller.redact(text) !== text;
    guessed ||= holds;
    return holds;
  };
  try {
    const texts = [args.idempotencyKey, args.search, ...(Array.isArray(args.fields) ? args.fields : [])];
    if (!texts.some((text) => typeof text === 'string' && holdsKey(text))) {
      const params = validateParams(op, args.params, holdsKey);
      // What validation made of the params (a phone number without its separators) is what is sent and shown: held to the rule too.
      guessed ||= jsonHoldsKey(JSON.stringify(params) ?? '', caller.redact);
      if (!guessed) {
        const request = buildRequest(op, params, siblings);
        // A message to customers needs its scope granted too, whatever the operation's own scope.
        const { grantedScopes } = caller;
        if (grantedScopes && op.messageScope && op.sendsMessage?.(params) && !grantedScopes.has(op.messageScope))
          throw new InputError(notGranted(op, op.messageScope, ' with a message to the customer'));
        return { op, params, request };
      }
    }
  } catch (error) {
    if (!guessed && error instanceof InputError) screenComposed(call, error.message);
    if (!guessed) throw error;
  }
  lockKey(call);
}

/** gate: does this call need a person's yes? Writes only, by the policy (ENGAGE_CONFIRM and the operation's risk). */
export function gate(deps: CallDeps, call: ToolCall, op: Operation): boolean {
  return call.kind === 'action' && deps.gated(op);
}

/**
 * claim: the owner's guardrails first (the idempotency key reserved, the caps counted in one
 * atomic step of the store, shared by every process), then the write journal checked again and
 * the write marked in flight, in one synchronous step (nothing awaited between): two yeses racing
 * for the same write send it once, and a yes given before the same write went out (an older token,
 * a spent store that lost it) sends nothing; the same millisecond counts as before, so a doubt
 * means asking again. What the write holds is noted in `held`, to give back if nothing is done.
 */
export async function claim(deps: CallDeps, call: ToolCall, prepared: Prepared, approval: Approval | undefined, held: Holdings): Promise<Reply | undefined> {
  if (call.kind !== 'action') return undefined;
  const { op, params } = prepared;
  // Taken before the server began stopping (the person asked meanwhile): sent now, the exit could cut it off at the API.
  if (deps.stopping?.()) return approval?.via === 'token' ? refusedAfterToken(stoppedBeforeSend(op)) : stoppedBeforeSend(op);
  const limited = await claimGuardrails(deps, call, op, params, lookupReader(deps, call, op, AbortSignal.timeout(LOOKUP_BUDGET_MS)), held);
  // A guardrail's refusal after a token's yes: the token is spent, so a retry goes without it.
  if (limited) return approval?.via === 'token' ? refusedAfterToken(limited) : limited;
  // A write that needs no yes: its last attempt on any server sharing the store (a restart, another
  // host, a replica), read before this one is marked, for its "Done" to tell of an unknown one.
  const lastAnywhere = approval ? undefined : await lastSentOf(deps, call, op, params);
  const { journal, keyId } = call.caller;
  const local = journal.lastSent(keyId, op.id, params);
  // The same write still on its way is never sent again; one sent since a yes is not sent on that yes.
  let earlier = local && (local.outcome === 'in-flight' || (approval && local.at >= approval.approvedAt)) ? local : undefined;
  if (!earlier) {
    const markedAt = journal.attempt(keyId, op.id, params, 'in-flight', approval?.confirmation);
    let replaced: { attempt?: Attempt } | undefined;
    try {
      // A write that needs no yes is marked too, so that the same write still at the API is refused on every process and
      // replica; once it has ended it is the caller's to repeat (idempotency keys guard that), so no time refuses it.
      // Its audit line but for the outcome rides with the mark: a server that stops with the write at the API leaves it.
      const audit = deps.guard.store().claimWrite ? await pendingAudit(deps, call, op, params, approval?.via ?? 'not needed') : undefined;
      const shared = await markShared(deps, call, op, params, approval ?? { approvedAt: NO_YES }, markedAt, audit);
      prepared.mark = shared.mark;
      if (shared.mark) held.mark = shared.mark;
      earlier = shared.refusedBy && fromSharedStore(call, shared.refusedBy);
      replaced = shared.replaced;
    } catch (error) {
      // A write that needs no yes needs the shared store for nothing else (review9: Redis down refuses it only for a cap or
      // an idempotency key): its mark is a help, not a condition, and this server's journal still holds it in flight. A
      // store that answers that claims are paused (it lost what it held) is the one guard of its twin on another replica.
      if (!approval && !(error instanceof ClaimsPaused)) return unmarked(deps, op, error);
      journal.attempt(keyId, op.id, params, 'refused');
      await releaseHoldings(deps.guard, held);
      throw error;
    }
    if (!earlier) {
      // Nobody was shown the earlier send of a write that needs no yes (another host's, or one the model may not connect
      // with this call): its answer tells of it.
      const told = earlierToTell(lastAnywhere, replaced);
      if (told) prepared.earlierSent = told;
      return undefined;
    }
    journal.attempt(keyId, op.id, params, 'refused'); // another replica's attempt refuses it: nothing was sent
  }
  const refusal = earlier.unread ? neverReadElsewhere(op, earlier) : earlier.outcome === 'in-flight' ? stillRunning(op, earlier) : sentSince(op, earlier);
  // Nothing new was sent: what the guardrails counted and reserved for this call is given back.
  await releaseHoldings(deps.guard, held);
  // The same write still on its way, or its unread answer told: this call repeated it (the audit record says so).
  if (earlier.outcome === 'in-flight' || earlier.unread) held.repeated = true;
  return refusal;
}

/**
 * The same write's attempt before this one, as a write that needs no yes tells of it: `read` before the claim, `replaced`
 * the claim's own view where the store gives it. That view holds one that began and ended between the read and the
 * claim, and says none where one read as still at the API gave its place back (the API refused it, or it was given up
 * before its send: nothing went out). Without it, one read as still at the API (another server's: this one's own would
 * have refused the claim) ended before the claim, how is not known here. The read names the sender more closely ("this
 * server") where it saw the same attempt.
 */
function earlierToTell(read: Attempt | undefined, replaced: { attempt?: Attempt } | undefined): Attempt | undefined {
  const over = replaced?.attempt;
  if (over) return read?.at === over.at && read.outcome === over.outcome ? read : over;
  if (read?.outcome === 'done' || read?.outcome === 'unknown') return read;
  return read?.outcome === 'in-flight' && !replaced ? { ...read, outcome: 'unknown' } : undefined;
}

/** A write that needs no yes goes without its shared mark when the store did not take it: said in the log, for the operator. */
function unmarked(deps: CallDeps, op: Operation, error: unknown): undefined {
  const why = error instanceof Error ? error.message : String(error);
  deps.log.warn(
    `${op.id} goes without its mark in the shared store, which did not take it (${why}): only this server refuses the same write while it is at the API`,
  );
  return undefined;
}

/** send: the one request to the API. A write that fails is noted as refused (nothing was done) or unknown. */
export async function send(deps: CallDeps, call: ToolCall, { op, params, request, mark }: Prepared): Promise<unknown> {
  const write = call.kind === 'action';
  const readBody = write ? undefined : await listBodyReaderFor(op.list, call.args, call.caller.redact);
  const context = {
    ...call.request,
    ...(call.caller.credentials ? { credentials: call.caller.credentials } : {}),
    ...(mark ? { beforeSend: () => checkStillOwned(deps, op, mark) } : {}),
  };
  const { journal, keyId } = call.caller;
  let data: unknown;
  try {
    data = await deps.client!.request(
      { method: op.method, path: request.path, template: op.path, body: request.body, safe: op.risk === 'safe', ...(readBody ? { readBody } : {}) },
      context,
    );
  } catch (error) {
    if (write) {
      const outcome = outcomeOfFailure(error, 'sent');
      journal.attempt(keyId, op.id, params, outcome);
      const status = error instanceof UpstreamError ? error.details.status : undefined;
      await settleShared(deps, mark, outcome, status !== undefined ? { apiStatus: status } : {});
    }
    throw error;
  }
  // Its host gone by now (cancelled, or quit): a write that needs no yes is noted as unread for any server's repeat.
  if (write) await settleShared(deps, mark, 'done', { unread: answerUnread(call) });
  return data;
}

/** answer: the API answered. A write is noted as carried out; the model is told what the data says (a read's records, paged). */
export function answer(call: ToolCall, { op, params, earlierSent }: Prepared, data: unknown): Reply {
  if (call.kind === 'read') return readAnswer(op, data, call.args, call.caller);
  const { journal, keyId } = call.caller;
  journal.attempt(keyId, op.id, params, 'done');
  journal.record(keyId, op.id, params, data);
  // Its data is scrubbed (redacted as it was cleaned) and its other words are our own.
  return alreadyRedacted(carriedOut(op, data, call.caller.scrub, earlierSent));
}
