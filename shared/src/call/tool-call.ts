// One tool call, stage by stage (stages.ts, confirm.ts). Whatever happens, the answer says what
// was done: every failure becomes an isError answer that tells the truth about a write, and every
// answer passes finishAnswer (the key redacted in every form, the size capped) on its way out.
import type { Operation } from '../model/types.js';
import { finishAnswer } from './answers.js';
import { confirm, isApproval, type Approval } from './confirm.js';
import type { CallDeps, Reply, ToolCall } from './context.js';
import { failedCall, notConfigured, type CallStage } from './outcomes.js';
import { answer, claim, gate, prepare, resolve, send } from './stages.js';
import { InputError } from '../model/errors.js';

export async function runToolCall(deps: CallDeps, call: ToolCall): Promise<Reply> {
  return finish(await stages(deps, call), call);
}

async function stages(deps: CallDeps, call: ToolCall): Promise<Reply> {
  if (!deps.client) return notConfigured(deps.domain, deps.configResult.ok ? [] : deps.configResult.problems);
  let op: Operation | undefined;
  let stage: CallStage = 'before';
  try {
    const resolved = await resolve(deps, call);
    op = resolved.op;
    const prepared = prepare(call, op, resolved.siblings);
    let approval: Approval | undefined;
    if (gate(deps, call, op)) {
      const confirmed = await confirm(deps, call, op, prepared.params);
      if (!isApproval(confirmed)) return confirmed;
      approval = confirmed;
    }
    const refusal = claim(call, prepared, approval);
    if (refusal) return refusal;
    stage = 'sent';
    const data = await send(deps, call, prepared);
    stage = 'answered';
    return answer(call, prepared, data);
  } catch (error) {
    if (!(error instanceof InputError))
      deps.log.warn(`${call.args.operationId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return failedCall(error, op, stage, call.kind === 'action', call.caller.credentials ? 'request' : 'environment');
  }
}

/** A round that asks the person carries our question as it is; every other answer is finished. */
function finish(reply: Reply, call: ToolCall): Reply {
  return 'resultType' in reply && reply.resultType === 'input_required' ? reply : finishAnswer(reply as Parameters<typeof finishAnswer>[0], call.caller.redact);
}
