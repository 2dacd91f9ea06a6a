// The ways an MCP host asks a person for a yes, behind the call room's Asking: a 2025 session's
// elicitation/create (awaited here), and a 2026-07-28 input_required round (the host asks, then
// repeats the call with the answer and our signed requestState). Which one, and whether the host
// can ask at all, comes from the connection's era and the capabilities it declared, never from
// what a request claims. The preview with a token is the call room's (confirm.ts).
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  ProtocolErrorCode,
  type ClientCapabilities,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Asking, PersonsAnswer } from '../call/context.js';
import type { Operation } from '../model/types.js';
import type { Logger } from '../safe/log.js';
import { isolateRightToLeft } from '../safe/sanitize.js';
import { callSignalOf } from './call-signal.js';

export type ProtocolEra = 'legacy' | 'modern';

/** What the handler needs of the connection it serves: its era, the SDK server (for 2025-era capabilities) and the request's context. */
export interface Exchange {
  era: ProtocolEra;
  mcp: McpServer;
  ctx: ServerContext;
}

const ELICITATION_TIMEOUT_MS = 10 * 60 * 1000;
/** The key of our one question in an input_required round. */
const CONFIRM_INPUT = 'confirm';

export function askingFor({ era, mcp, ctx }: Exchange, log: Logger): Asking {
  const modern = era === 'modern';
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = (modern ? envelope?.[CLIENT_CAPABILITIES_META_KEY] : mcp.server.getClientCapabilities()) as ClientCapabilities | undefined;
  const elicitation = capabilities?.elicitation;
  // Form elicitation (declared as `form`, or as `{}` by hosts from before the modes).
  const canAsk = elicitation !== undefined && (elicitation.form !== undefined || Object.keys(elicitation).length === 0);
  if (modern) {
    return {
      canAsk,
      ...returnedAnswer(ctx),
      ask: async (question, op, issueState) => ({
        kind: 'round',
        round: inputRequired({
          inputRequests: { [CONFIRM_INPUT]: inputRequired.elicit({ message: isolateRightToLeft(question), requestedSchema: confirmSchema(op) }) },
          requestState: issueState(),
        }),
      }),
    };
  }
  return { canAsk, ask: (question, op) => elicit(mcp, ctx, question, op, log) };
}

/** A 2026-07-28 repeat of an asked call: the requestState it brought back, and the answer to our question (or that it was not shown). */
function returnedAnswer(ctx: ServerContext): Pick<Asking, 'returned'> {
  const state = ctx.mcpReq.requestState<unknown>();
  if (typeof state !== 'string') return {};
  const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_INPUT);
  // A repeat that carries no answer to our question came back malformed: a no (never a preview).
  if (answer.kind !== 'elicit') return { returned: { state, answer: { kind: 'answer', yes: false, action: 'unread' } } };
  return { returned: { state, answer: { kind: 'answer', yes: answer.action === 'accept' && answer.content?.confirm === true, action: answer.action } } };
}

/**
 * A 2025 session: elicitation/create, awaited. Only a host that turns out unable to ask at all (it
 * answers method-not-found) gets the preview instead. Any other failure (not a cancelled call) is a
 * no, answered at once: an error, no answer within the timeout, a result that is not an elicitation
 * result, or a response the connection could not read (the SDK drops one that is not JSON-RPC,
 * `result: null`, `"yes"`, `true`, without settling the question, so it is watched for here).
 */
async function elicit(mcp: McpServer, ctx: ServerContext, question: string, op: Operation, log: Logger): Promise<PersonsAnswer | { kind: 'not-shown' }> {
  // The call's own signal: in remote mode a 2025 session's dropped POST withdraws the question too.
  const signal = callSignalOf(ctx);
  const unreadable = new AbortController();
  const stopWatching = onUnreadableMessage(mcp, () => unreadable.abort());
  try {
    const answer = await ctx.mcpReq.elicitInput(
      { message: isolateRightToLeft(question), requestedSchema: confirmSchema(op) },
      { signal: signal ? AbortSignal.any([signal, unreadable.signal]) : unreadable.signal, timeout: ELICITATION_TIMEOUT_MS },
    );
    return { kind: 'answer', yes: answer.action === 'accept' && answer.content?.confirm === true, action: answer.action };
  } catch (error) {
    if (signal?.aborted) throw error;
    const why = unreadable.signal.aborted
      ? 'the host sent a message that is not JSON-RPC while it was open'
      : error instanceof Error
        ? error.message
        : String(error);
    if (isMethodNotFound(error)) {
      log.warn(`confirmation request for ${op.id} failed, falling back to a preview: ${why}`);
      return { kind: 'not-shown' };
    }
    log.warn(`confirmation request for ${op.id} got no answer that could be read, taken as a no: ${why}`);
    return { kind: 'answer', yes: false, action: 'unread' };
  } finally {
    stopWatching();
  }
}

/** The host's own answer that it has no elicitation/create (a JSON-RPC error, as the SDK hands it over). */
function isMethodNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === ProtocolErrorCode.MethodNotFound;
}

/** The questions waiting on each connection, told when it receives a message it cannot read (which may be their answer). */
const waiting = new WeakMap<McpServer, Set<() => void>>();

function onUnreadableMessage(mcp: McpServer, listener: () => void): () => void {
  let listeners = waiting.get(mcp);
  if (!listeners) {
    const told = new Set<() => void>();
    listeners = told;
    waiting.set(mcp, told);
    const previous = mcp.server.onerror;
    mcp.server.onerror = (error) => {
      previous?.(error);
      if (isUnreadableMessage(error)) for (const waiter of [...told]) waiter();
    };
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The SDK's report of an incoming message it could not read: not JSON (HTTP), not JSON-RPC (a transport's parse, or the protocol's own check). */
function isUnreadableMessage(error: Error): boolean {
  return error.name === 'ZodError' || error instanceof SyntaxError || error.message.startsWith('Unknown message type');
}

function confirmSchema(op: Operation) {
  return {
    type: 'object' as const,
    properties: { confirm: { type: 'boolean' as const, title: `Yes, run ${op.id}`, description: 'Only yes runs it.' } },
    required: ['confirm'],
  };
}
