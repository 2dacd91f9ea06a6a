// The signal a tool call runs under (the SDK's, and in remote mode its connection's): register.ts
// hands it to the call, ask.ts to the question the call asks the person.
import type { ServerContext } from '@modelcontextprotocol/server';

/**
 * The call's signal: the SDK's (the client's cancel, its session closed), and in remote mode the
 * request's own connection closed before its answer was written (authInfo.extra.closedUnanswered,
 * set by the service's handler). A 2025 session's call otherwise outlived its dropped POST: its
 * answer went to no one, a write waiting out a 429 was sent after its client had gone.
 */
export function callSignalOf(ctx: ServerContext): AbortSignal {
  const closed = ctx.http?.authInfo?.extra?.closedUnanswered;
  return closed instanceof AbortSignal ? AbortSignal.any([ctx.mcpReq.signal, closed]) : ctx.mcpReq.signal;
}
