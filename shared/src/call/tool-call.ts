// One tool call, stage by stage (stages.ts, confirm.ts), with the owner's guardrails hooked in
// (guardrails.ts). Whatever happens, the answer says what was done: every failure becomes an
// isError answer that tells the truth about a write, and every answer passes finishAnswer (the
// key redacted in every form, the size capped) on its way out. A write that reached an end gets
// its audit line.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { forGrant } from '../model/references.js';
import type { Operation, Params } from '../model/types.js';
import { InputError, UpstreamError } from '../model/errors.js';
import { finishAnswer } from './answers.js';
import { confirm, isApproval, lastSentOf, spentUnsent, type Approval } from './confirm.js';
import type { CallDeps, CallFacts, Reply, ToolCall } from './context.js';
import type { Attempt } from './journal.js';
import { afterWrite, beforeConfirm, outcomeOf, type WriteTrace } from './guardrails.js';
import { failedCall, notConfigured, outcomeOfFailure, refusedAfterToken, stoppedWhileWaiting, type CallStage } from './outcomes.js';
import { takeSharedUnread, type SharedMark } from './shared-mark.js';
import { answer, claim, gate, prepare, resolve, screen, send } from './stages.js';
import { answerUnread, keepUnread, takeKeptUnread } from './undelivered.js';

export async function runToolCall(deps: CallDeps, call: ToolCall): Promise<Reply> {
  const trace: CallTrace = {};
  const reply = finish(await stages(deps, call, trace), call);
  // A yes this call spent, its write never sent (a guardrail, another attempt of the same write, a failure before sending).
  if (trace.unsentConfirmation) await spentUnsent(deps, call, trace.unsentConfirmation);
  // A write that needs no yes, carried out for a host that cancelled the call meanwhile: its answer is kept for the repeat.
  if (trace.unread && answerUnread(call))
    keepUnread(call, trace.unread.op, trace.unread.params, reply as CallToolResult, trace.unread.mark?.unreadNoted === true);
  call.telemetry?.settled(factsOf(call, trace, reply));
  if (trace.write) {
    // The answer stands whatever happens to the record: a failure to write it is logged, never turned into a false "failed".
    await afterWrite(deps, call, trace.write, reply).catch((error: unknown) =>
      deps.log.error(`guardrails' state or audit record not written for ${trace.write?.op.id}: ${error instanceof Error ? error.message : String(error)}`),
    );
  }
  return reply;
}

/** What the stages noted on the way: the operation (once it is the catalog's), for a write its trace, and a confirmation it spent before sending. */
interface CallTrace {
  op?: Operation;
  write?: WriteTrace;
  unsentConfirmation?: string;
  /** A write that needs no yes, carried out: its answer is kept if its host cancelled the call meanwhile. */
  unread?: { op: Operation; params: Params; mark?: SharedMark };
}

async function stages(deps: CallDeps, call: ToolCall, trace: CallTrace): Promise<Reply> {
  if (!deps.client) return notConfigured(deps.domain, deps.configResult.ok ? [] : deps.configResult.problems);
  let op: Operation | undefined;
  let stage: CallStage = 'before';
  // A write that needs no yes, whose last attempt anywhere went out: a repeat of unknown outcome says it may be twice.
  let earlierSent: Attempt | undefined;
  try {
    screen(call);
    const resolved = await resolve(deps, call);
    // As this caller sees it: a read its OAuth grant cannot call is named as such, never as the next call.
    op = forGrant(resolved.op, call.caller.grantedScopes, call.caller.grantDomain);
    trace.op = op;
    const prepared = prepare(call, op, resolved.siblings);
    const write: WriteTrace = { op, params: prepared.params, confirmation: 'not needed', held: {} };
    if (call.kind === 'action') trace.write = write;
    const ungated = call.kind === 'action' && !gate(deps, call, op);
    // The same write, carried out for a call whose host cancelled it: that answer, never read, and nothing sent.
    const unread = ungated ? takeKeptUnread(call, op, prepared.params) : undefined;
    // Noted in the shared store too: given only if no other server's repeat was told first.
    if (unread && (!unread.shared || (await takeSharedUnread(deps, call, op, prepared.params)))) {
      write.held.repeated = true;
      return unread.reply;
    }
    const early = call.kind === 'action' ? await beforeConfirm(deps.guard, call, op, prepared.params, write.held) : undefined;
    if (early) return await keyTold(deps, call, op, write, early);
    let approval: Approval | undefined;
    if (gate(deps, call, op)) {
      const confirmed = await confirm(deps, call, op, prepared.params, write);
      if (!isApproval(confirmed)) return confirmed;
      approval = confirmed;
      write.confirmation = confirmed.via;
      if (confirmed.confirmation) trace.unsentConfirmation = confirmed.confirmation;
    }
    const refusal = await claim(deps, call, prepared, approval, write.held);
    if (refusal) return await keyTold(deps, call, op, write, refusal);
    // From here the write is marked in flight: how it ends is the journal's and the shared mark's to note.
    stage = 'sent';
    earlierSent = prepared.earlierSent;
    trace.unsentConfirmation = undefined;
    const data = await send(deps, call, prepared);
    stage = 'answered';
    if (ungated) trace.unread = { op, params: prepared.params, mark: prepared.mark };
    return answer(call, prepared, data);
  } catch (error) {
    if (!(error instanceof InputError))
      deps.log.warn(`${call.args.operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    if (trace.write && error instanceof UpstreamError && error.details.status !== undefined) trace.write.apiStatus = error.details.status;
    // A write that had not reached the API when the server began stopping (a 429's wait): not sent, and said so.
    if (op && stage === 'sent' && deps.stopping?.() && error instanceof UpstreamError && error.kind === 'cancelled' && !error.details.mayHaveHappened)
      return trace.write?.confirmation === 'token' ? refusedAfterToken(stoppedWhileWaiting(op)) : stoppedWhileWaiting(op);
    const keySource = call.caller.grantedScopes ? 'grant' : call.caller.credentials ? 'request' : 'environment';
    // A write the API refused: exactly this write sent before (its place given back to it) may be what the refusal reflects;
    // sent by this process, or read from the store others share (the state directory kept over a restart, remote mode's Redis).
    // The earlier send a write that needs no yes went out after is told with an unknown outcome (both may have gone out),
    // never with another refusal (a scope, a rate limit, a send that never left): that one says nothing of it.
    const earlier =
      op && trace.write && stage === 'sent' && error instanceof UpstreamError && (error.kind === 'not-found' || error.kind === 'rejected')
        ? await lastSentOf(deps, call, op, trace.write.params)
        : outcomeOfFailure(error, stage) === 'unknown'
          ? earlierSent
          : undefined;
    return failedCall(error, op, stage, call.kind === 'action', keySource, trace.write?.confirmation === 'token', earlier);
  }
}

/**
 * An idempotency key's first answer, given again (it was carried out, nothing sent again): the
 * model is told now, so the write's unread note in the shared store goes with it, and the user's
 * next repeat of the same write is sent rather than told a second time.
 */
async function keyTold(deps: CallDeps, call: ToolCall, op: Operation, write: WriteTrace, reply: Reply): Promise<Reply> {
  if (call.args.idempotencyKey !== undefined && write.held.repeated && !gate(deps, call, op) && outcomeOf(reply) === 'done')
    await takeSharedUnread(deps, call, op, write.params);
  return reply;
}

/** What the call's span is told as it ends (telemetry on). */
function factsOf(call: ToolCall, trace: CallTrace, reply: Reply): CallFacts {
  const operationId = trace.op?.id;
  const asked = 'resultType' in reply && reply.resultType === 'input_required';
  if (call.kind === 'read') return { ...(operationId ? { operationId } : {}), outcome: (reply as { isError?: boolean }).isError ? 'failed' : 'done' };
  const outcome = asked ? 'asked' : trace.write?.held.repeated ? 'repeated' : (outcomeOf(reply) as string);
  // A person still to say yes (or who said no) gave no yes by any path: the outcome says so.
  const noYes = ['preview', 'asked', 'declined'].includes(outcome) && trace.write?.confirmation === 'not needed';
  return { ...(operationId ? { operationId } : {}), ...(trace.write && !noYes ? { confirmation: trace.write.confirmation } : {}), outcome };
}

/** A round that asks the person carries our question as it is; every other answer is finished. */
function finish(reply: Reply, call: ToolCall): Reply {
  return 'resultType' in reply && reply.resultType === 'input_required' ? reply : finishAnswer(reply as Parameters<typeof finishAnswer>[0], call.caller.redact);
}
