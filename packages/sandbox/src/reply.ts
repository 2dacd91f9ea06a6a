// Answering a request: the envelope (spec section 3) for a success or an ApiFailure, and what an
// answer carries out. Every answer's status goes into the request's record.
import type { ServerResponse } from 'node:http';
import { ApiFailure } from './failure.js';
import type { HandlerContext, Route } from './routes/route.js';
import type { SandboxState } from './state.js';
import type { SeenRequest } from './types.js';

export type Headers = Record<string, string | number>;

export interface Reply {
  send(status: number, payload: unknown, headers?: Headers): void;
  fail(error: ApiFailure, headers?: Headers): void;
}

export function replyTo(res: ServerResponse, record: SeenRequest): Reply {
  const send = (status: number, payload: unknown, headers: Headers = {}) => {
    record.status = status;
    const body = JSON.stringify(payload);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const fail = (error: ApiFailure, headers: Headers = {}) =>
    send(error.status, { status: error.status, errorCode: error.errorCode, message: error.message, data: null }, headers);
  return { send, fail };
}

/** What a handler came to: its data, or the ApiFailure it threw. */
export type Outcome = { data: unknown; error?: undefined } | { data?: undefined; error: ApiFailure };

/** Runs the route's handler; a mutating route that succeeds is recorded as carried out. Other errors than ApiFailure propagate. */
export function carryOut(sandbox: SandboxState, hit: Route, ctx: HandlerContext): Outcome {
  try {
    const data = hit.handler(ctx);
    if (hit.mutating)
      sandbox.carried.push({ operationId: hit.operationId, tenantId: ctx.tenant.tenantId, params: { ...ctx.params, ...ctx.body }, at: Date.now() });
    return { data };
  } catch (error) {
    if (error instanceof ApiFailure) return { error };
    throw error;
  }
}

export function answer(reply: Reply, outcome: Outcome, headers: Headers): void {
  if (outcome.error) reply.fail(outcome.error, headers);
  else reply.send(200, { status: 200, errorCode: 0, data: outcome.data }, headers);
}
