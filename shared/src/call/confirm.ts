// The confirm stage: a gated write runs only with a person's yes. One rule for every host:
// - a host that can ask the person (elicitation, in either era) is asked, every time: a
//   confirmationToken does not replace the question there;
// - a host that cannot ask gets a preview with a single-use confirmationToken, and the token,
//   repeated with exactly the same call, is the yes;
// - where the host declared it can ask but turns out unable to (it answers the question with
//   method-not-found), the preview is the way: a token from it is honoured then, so such a host is
//   never stuck in a loop of questions. Any other answer that is not a yes we can read (malformed,
//   an error, none within the timeout) is a no, answered at once.
// Tokens and requestStates are bound to the operation, its exact params and the key (confirmations.ts),
// and to quietHoursOverride: a yes to a confirmation that did not show the override never carries one.
// A yes is also bound to the facts it was shown (statement.ts `bound`), read again when it comes
// back: a campaign whose audience (or text, where the API shows it) changed in between is not run
// on that yes, on any path.
import { UpstreamError } from '../model/errors.js';
import type { LookupReader, Operation, Params, PreviewReader } from '../model/types.js';
import type { ConfirmationPath } from './audit.js';
import type { Asking, CallDeps, Reply, ToolCall } from './context.js';
import { limitState, messageCount, type WriteTrace } from './guardrails.js';
import { forwardNow, writeDigest, type Attempt } from './journal.js';
import { screenComposed } from './key-guesses.js';
import {
  ASKED_AGAIN,
  QUESTION_NOT_SHOWN,
  TOKEN_REFUSALS,
  alreadyUsed,
  changedSinceAsked,
  declinedBy,
  factsChanged,
  limitLines,
  notCheckedWarning,
  previewAnswer,
  sendingNowWarning,
  sentBeforeWarning,
  stillRunning,
  stoppedBeforeSend,
  type TokenRefusal,
} from './outcomes.js';
import { fromSharedStore, noteSharedConfirmation, spentOutcome } from './shared-mark.js';
import { boundFacts, composeStatement, type Statement } from './statement.js';

/** A person's yes, and when what they said yes to was shown (the claim stage compares it with the journal). */
export interface Approval {
  approvedAt: number;
  /** The token or requestState that carried the yes (confirmations.ts `idOf`), so the journal can tell how its own attempt went. */
  confirmation?: string;
  /** How the yes was given, for the audit record. */
  via: ConfirmationPath;
}

/** Whose yes a confirmation carries: the key's, or in remote mode with OAuth the grant's. */
const boundTo = (call: ToolCall) => call.caller.confirmationsBoundTo ?? call.caller.keyId;

/** What a confirmation is bound to besides the params: the operation, and whether the call overrides the quiet hours. */
const boundOperation = (call: ToolCall, op: Operation) => (call.args.quietHoursOverride === true ? `${op.id} with quietHoursOverride` : op.id);

/**
 * What the confirm stage notes for the audit record when it answers instead of a yes: the
 * confirmation path the call presented, and `held.repeated` when the call sent nothing because
 * it repeated an earlier one (a spent confirmation, the same write still on its way).
 */
export type ConfirmNotes = Pick<WriteTrace, 'confirmation' | 'held'>;

/** The confirmation a call came with, whatever became of it. */
function presentedPath(call: ToolCall): ConfirmationPath {
  if (call.asking.returned) return 'input_required';
  return call.args.confirmationToken !== undefined ? 'token' : 'not needed';
}

/** A call that sent nothing because it repeated an earlier one: noted so, with the path it came by. */
function repeatedCall(notes: ConfirmNotes, via: ConfirmationPath, reply: Reply): Reply {
  notes.confirmation = via;
  notes.held.repeated = true;
  return reply;
}

export function isApproval(answer: Reply | Approval): answer is Approval {
  return typeof (answer as Partial<Approval>).approvedAt === 'number';
}

/** The confirm stage: the person's yes, or the answer to give instead (a question, a preview, a decline, a refusal). */
export async function confirm(deps: CallDeps, call: ToolCall, op: Operation, params: Params, notes: ConfirmNotes): Promise<Reply | Approval> {
  const { asking } = call;
  // The same write still on its way (a host that timed out and asked again): nothing new runs.
  const earlier = await lastSentOf(deps, call, op, params);
  if (earlier?.outcome === 'in-flight') return repeatedCall(notes, presentedPath(call), stillRunning(op, earlier));
  let reason = '';
  if (asking.returned) {
    const verdict = await redeemReturned(deps, call, asking.returned, op, params, notes);
    if (!asksAgain(verdict)) return verdict;
    reason = verdict.askAgain;
  }
  if (asking.canAsk) return ask(deps, call, op, params, notes, reason);
  return redeemTokenOrPreview(deps, call, op, params, reason, notes);
}

/** A requestState that could not be taken: the person is asked again, and told why first. */
interface AskAgain {
  askAgain: string;
}

const asksAgain = (verdict: Reply | Approval | AskAgain): verdict is AskAgain => typeof (verdict as Partial<AskAgain>).askAgain === 'string';

/** A 2026-07-28 repeat of an asked call: its requestState must be ours, for this call, unspent; else the person is asked again, told why. */
async function redeemReturned(
  deps: CallDeps,
  call: ToolCall,
  returned: NonNullable<Asking['returned']>,
  op: Operation,
  params: Params,
  notes: ConfirmNotes,
): Promise<Reply | Approval | AskAgain> {
  const redemption = await deps.confirmations.redeem('state', returned.state, boundTo(call), boundOperation(call, op), params);
  const confirmation = deps.confirmations.idOf('state', returned.state);
  if (redemption === 'spent') return repeatedCall(notes, 'input_required', await spentAnswer(deps, call, op, params, 'requestState', confirmation));
  if (redemption !== 'ok') {
    if (redemption === 'mismatch') await spentUnsent(deps, call, confirmation);
    deps.log.info(`requestState for ${op.id} refused (${redemption}); asking again`);
    return { askAgain: ASKED_AGAIN[redemption] };
  }
  // Spent now: where it ends without its write, the journal says so, for a host that sends it again.
  const unsent = async <T>(reply: T): Promise<T> => {
    await spentUnsent(deps, call, confirmation);
    return reply;
  };
  const { answer } = returned;
  notes.confirmation = 'input_required';
  if (!answer.yes) return unsent(declinedBy(op, answer.action));
  const now = await boundNow(deps, call, op, params);
  // A key the API refused since the question: the write would meet it too, so that is the answer, not "ask again".
  if (now.keyRefused) {
    await spentUnsent(deps, call, confirmation);
    throw now.keyRefused;
  }
  if (!deps.confirmations.showed('state', returned.state, now.bound)) return unsent(changedSinceAsked(op, now.unread));
  return { approvedAt: deps.confirmations.issuedAt('state', returned.state), confirmation, via: 'input_required' as const };
}

/** `reason`: why a question already answered is asked again, put before it (the person sees the same question twice). */
async function ask(deps: CallDeps, call: ToolCall, op: Operation, params: Params, notes: ConfirmNotes, reason = ''): Promise<Reply | Approval> {
  // Taken before the journal is read for the statement's warning: a yes dates from what it was shown.
  const shownAt = forwardNow();
  // Dated no later than the system clock now, as a token's is: a time that stands after the clock was set back would date
  // the yes after a send another server (its own clock) made once the question was shown, and the yes would send it again.
  const yesAt = Math.min(shownAt, Date.now());
  const statement = await describeEffect(deps, call, op, params);
  const dated = datedBefore(shownAt, statement);
  // The server began stopping while the preview was read: the write would not be sent (the claim refuses it), so nobody is asked.
  if (deps.stopping?.()) return stoppedBeforeSend(op);
  // Dated no later than yesAt too: issue() reads the system clock at its own time, after the store was read (review49-clocks).
  const issueState = () => deps.confirmations.issue('state', boundTo(call), boundOperation(call, op), params, Math.min(yesAt, dated), statement.bound).value;
  const result = await call.asking.ask(`${reason ? `${reason}\n\n` : ''}${statement.text}\n\nRun it?`, op, issueState);
  if (result.kind === 'round') return result.round;
  if (result.kind === 'not-shown') return redeemTokenOrPreview(deps, call, op, params, QUESTION_NOT_SHOWN, notes);
  notes.confirmation = 'elicitation';
  if (!result.yes) return declinedBy(op, result.action);
  const now = await boundNow(deps, call, op, params);
  if (now.keyRefused) throw now.keyRefused;
  if (now.bound !== statement.bound) return changedSinceAsked(op, now.unread);
  return { approvedAt: Math.min(yesAt, dated), via: 'elicitation' as const };
}

/** When a yes to `statement` counts as given: before the same write another server began sending as it was put together. */
function datedBefore(shownAt: number, statement: Statement): number {
  return statement.sending ? Math.min(shownAt, statement.sending.at - 1) : shownAt;
}

/** The preview path: a token that came with the call is the yes; without one (or with a bad one), a preview and a fresh token. */
async function redeemTokenOrPreview(deps: CallDeps, call: ToolCall, op: Operation, params: Params, reason: string, notes: ConfirmNotes) {
  const token = call.args.confirmationToken;
  if (token !== undefined) {
    const redemption = await deps.confirmations.redeem('token', token, boundTo(call), boundOperation(call, op), params);
    const confirmation = deps.confirmations.idOf('token', token);
    // A genuine token for this very call, used before: the yes was given and spent. A retry must
    // not be handed a new way to say yes to what may already have happened.
    if (redemption === 'spent') return repeatedCall(notes, 'token', await spentAnswer(deps, call, op, params, 'confirmationToken', confirmation));
    const now = redemption === 'ok' ? await boundNow(deps, call, op, params) : undefined;
    if (now?.keyRefused) {
      await spentUnsent(deps, call, confirmation);
      throw now.keyRefused;
    }
    if (now && deps.confirmations.showed('token', token, now.bound))
      return { approvedAt: deps.confirmations.issuedAt('token', token), confirmation, via: 'token' as const };
    // Spent by this call, and its write not sent: shown again, it is answered so (not "may have run").
    if (redemption === 'ok' || redemption === 'mismatch') await spentUnsent(deps, call, confirmation);
    reason = [reason, now ? factsChanged(now.unread) : TOKEN_REFUSALS[redemption as TokenRefusal]].filter(Boolean).join(' ');
  }
  // Taken before the journal is read for the preview's warning: the token's yes dates from then.
  const shownAt = forwardNow();
  // No later than the system clock now, as the question's yes (ask): issue() takes the system clock at its own time, after
  // the store was read, and a clock set back leaves forwardNow ahead; another server's send in between would stand before the yes.
  const shownBy = Math.min(shownAt, Date.now());
  const statement = await describeEffect(deps, call, op, params);
  const { value: fresh, expiresAt } = deps.confirmations.issue(
    'token',
    boundTo(call),
    boundOperation(call, op),
    params,
    Math.min(shownBy, datedBefore(shownAt, statement)),
    statement.bound,
  );
  return previewAnswer(op, call.toolName, statement, reason, fresh, new Date(expiresAt).toISOString());
}

/** A spent confirmation shown again: what came of its own attempt, and of the write's last attempt that went out (it may have gone out by another). */
async function spentAnswer(deps: CallDeps, call: ToolCall, op: Operation, params: Params, what: 'confirmationToken' | 'requestState', confirmation: string) {
  return alreadyUsed(op, what, await spentOutcome(deps, call, confirmation), await lastSentOf(deps, call, op, params));
}

/**
 * A confirmation spent without its write going out (other params, facts read otherwise, a no, a
 * guardrail, another attempt of the same write): this replica's journal and the shared store say
 * so, and a replay of it, on any replica, is answered "nothing was carried out with it".
 */
export async function spentUnsent(deps: CallDeps, call: ToolCall, confirmation: string): Promise<void> {
  // Spent a second time (a spent store that lost it, as Redis restarted): its first use went out,
  // and that stays its answer, here and in the shared store, never "nothing was carried out".
  const went = call.caller.journal.outcomeOf(confirmation);
  if (went && went.outcome !== 'refused') {
    if (went.outcome !== 'in-flight') await noteSharedConfirmation(deps, confirmation, went);
    return;
  }
  call.caller.journal.spentUnsent(confirmation);
  await noteSharedConfirmation(deps, confirmation, { at: Date.now(), outcome: 'refused' });
}

/**
 * The write's last attempt that went out: this server's, or where a store is shared by replicas
 * (remote mode on Redis) the newer of that one and this server's. A shared store that does not
 * answer leaves this server's (`shared.silent` says so): the claim stage, which fails closed, is what never sends twice.
 */
export async function lastSentOf(
  deps: CallDeps,
  call: ToolCall,
  op: Operation,
  params: Params,
  shared: { silent?: boolean } = {},
): Promise<Attempt | undefined> {
  const { caller } = call;
  const local = caller.journal.lastSent(caller.keyId, op.id, params);
  const store = deps.guard.store();
  if (!store.lastSentWrite || local?.outcome === 'in-flight') return local;
  const last = await store.lastSentWrite(writeDigest(caller.keyId, op.id, params), Date.now()).catch(() => {
    shared.silent = true;
    return undefined;
  });
  return last && !(local && local.at >= last.at) ? fromSharedStore(call, last) : local;
}

/** All of a preview's look-ups together; a record read late is said unread (catalog.ts notShown), the quota left out. */
export const LOOKUP_BUDGET_MS = 6_000;

/**
 * The statement a person is shown, with whatever facts could be read. Each look-up gets one short
 * attempt, all of them LOOKUP_BUDGET_MS together; a record that failed or came late is said unread
 * (catalog.ts notShown: nobody agrees to a record unseen), the quota is left out. An identical
 * write this server sent lately is named first, so nobody says yes twice unknowingly.
 */
export async function describeEffect(deps: CallDeps, call: ToolCall, op: Operation, params: Params): Promise<Statement> {
  const { caller } = call;
  const read = lookupReader(deps, call, op, AbortSignal.timeout(LOOKUP_BUDGET_MS));
  // The facts read are redacted already: what redaction would change, the model's params joined into (key-guesses.ts).
  const statement = await composeStatement(op, params, read, caller.journal.writtenWith(caller.keyId), caller.redact, (text) => screenComposed(call, text));
  const shared: { silent?: boolean } = {};
  const earlier = await lastSentOf(deps, call, op, params, shared);
  if (earlier?.outcome === 'done' || earlier?.outcome === 'unknown') statement.text = `${sentBeforeWarning(op, earlier)}\n${statement.text}`;
  // The store other servers share did not answer: a send of theirs the claim will not refuse may be missing here; said.
  else if (shared.silent) statement.text = `${notCheckedWarning(op)}\n${statement.text}`;
  // Begun after the confirm stage found none in flight: said, and the yes dated before it (sentSince refuses it once used).
  if (earlier?.outcome === 'in-flight') {
    statement.text = `${sendingNowWarning(op, earlier)}\n${statement.text}`;
    statement.sending = earlier;
  }
  // The owner's limits, where they stand now: the person sees the count against each cap before saying yes.
  const limits = op.messages && (await limitState(deps.guard, call, op, params, () => messageCount(op, params, read)));
  if (limits) statement.text = [statement.text, ...limitLines(limits).map((line) => `- ${line}`)].join('\n');
  // A key the API refuses would be refused for the write too: said now, rather than a preview and a token for it.
  if (read.keyRefused) throw read.keyRefused;
  return statement;
}

/**
 * What of the facts a yes is bound to, as they read now (the same look-ups as the statement's; none
 * for an operation without facts), and whether a look-up failed (its fact is then left out, so the
 * yes does not hold: `unread` tells the model that was the cause, not a change); `keyRefused`, the
 * API's 401 if a look-up met one (the write would meet it too: the call ends with it).
 */
async function boundNow(deps: CallDeps, call: ToolCall, op: Operation, params: Params): Promise<{ bound: string; unread: boolean; keyRefused?: Error }> {
  const { caller } = call;
  const lookup = lookupReader(deps, call, op, AbortSignal.timeout(LOOKUP_BUDGET_MS));
  let unread = false;
  const read: PreviewReader = (path) =>
    lookup(path).then(
      (data) => {
        if (data === undefined) unread = true;
        return data;
      },
      (error: unknown) => {
        unread = true;
        throw error;
      },
    );
  const bound = await boundFacts(op, params, read, caller.journal.writtenWith(caller.keyId));
  return { bound, unread, ...(lookup.keyRefused ? { keyRefused: lookup.keyRefused } : {}) };
}

/** Reads the API for a preview or a guardrail's count: one short attempt each, within `budget`; a failed look-up is undefined. */
export function lookupReader(deps: CallDeps, call: ToolCall, op: Operation, budget: AbortSignal): LookupReader {
  const { caller } = call;
  const signal = call.request.signal ? AbortSignal.any([call.request.signal, budget]) : budget;
  const lookupContext = { ...call.request, signal, ...(caller.credentials ? { credentials: caller.credentials } : {}) };
  const reader: LookupReader = (path: string) =>
    deps
      .client!.request({ method: 'GET', path, safe: true, lookup: true }, lookupContext)
      .then(caller.scrub)
      .catch((error: unknown) => {
        if (call.request.signal?.aborted) throw error;
        if (error instanceof UpstreamError && error.kind === 'auth') reader.keyRefused = error;
        deps.log.info(`look-up ${path} for ${op.id} failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      });
  return reader;
}
