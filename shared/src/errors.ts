// Errors and what the model is told about them. Every message says what happened, why, and what
// to do next, in one or two sentences; never the key, an HTML page or a stack trace.
import type { Operation } from './catalog.js';

/** Something the caller can fix: bad input, an operation that is not available. Nothing was sent. */
export class InputError extends Error {
  constructor(
    message: string,
    readonly operation?: Operation,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

export type UpstreamKind =
  | 'auth' // 401
  | 'scope' // 403
  | 'not-found' // 404
  | 'rejected' // other 4xx
  | 'rate-limited' // 429 beyond what we wait for
  | 'server' // 5xx
  | 'unreachable' // the request never left: nothing was sent
  | 'certificate' // the TLS handshake failed on the API's certificate: nothing, not even the key, was sent
  | 'network' // reset, closed socket: the request may have been received
  | 'timeout'
  | 'bad-response' // not JSON, not the envelope, truncated
  | 'redirect'
  | 'cancelled';

/** A failed exchange with the API, typed so the answer can say the truth about it. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamKind,
    message: string,
    readonly details: {
      status?: number;
      /** The API may have carried the request out; repeating it could do it twice. */
      mayHaveHappened?: boolean;
      retryAfterSeconds?: number;
      /** The API's own message, sanitized, for 4xx answers. */
      apiMessage?: string;
      /** For stderr logs only (a 5xx body, a low-level error code); never shown to the model. */
      logDetail?: string;
    } = {},
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** How far a call got: nothing sent yet, the request sent, or the API's answer in hand. */
export type CallStage = 'before' | 'sent' | 'answered';

/**
 * The text a model gets for a failed call of `op`. `stage` says how far the call got, so that the
 * server's own failure after a write was sent is not reported as if nothing had happened.
 */
export function describeFailure(error: unknown, op: Operation | undefined, stage: CallStage = 'before'): string {
  if (error instanceof InputError) return error.message;
  if (!(error instanceof UpstreamError)) {
    if (op && op.risk !== 'safe' && stage === 'answered') {
      const check = op.verifyWith ? `; see the result with ${op.verifyWith}` : '';
      return `The API answered that ${op.id} was carried out, but the MCP server failed while preparing its answer (the details are in the server log)${check}. Do not repeat it.`;
    }
    if (op && op.risk !== 'safe' && stage === 'sent') return unknownOutcome('Internal error in the MCP server while the request was in flight', op);
    return 'Internal error in the MCP server; nothing more is known. The details are in the server log.';
  }
  const { status, apiMessage, retryAfterSeconds, mayHaveHappened } = error.details;
  const name = op?.id ?? 'the operation';
  switch (error.kind) {
    case 'auth':
      return 'The API refused the key (HTTP 401): it is invalid, revoked or expired. Create a new key in the tenant console under API key settings and set ENGAGE_API_KEY.';
    case 'scope':
      return `The key lacks the permission ${op?.scope ?? 'this operation needs'} that ${name} needs (HTTP 403). Create a key with that scope in the tenant console under API key settings; retrying will not help.`;
    case 'not-found': {
      const hint = op?.findIdsWith ? ` Use ${op.findIdsWith} to find valid ids.` : '';
      return `Not found (HTTP 404)${apiMessage ? `: ${apiMessage}` : ''}.${hint}`;
    }
    case 'rejected':
      return `The API rejected ${name} (HTTP ${status})${apiMessage ? `: ${apiMessage}` : ''}. Nothing was changed; correct the request before trying again.`;
    case 'rate-limited':
      return `The API's rate limit is exhausted (HTTP 429); ${name} was not carried out. Try again in ${retryAfterSeconds ?? 60} seconds.`;
    case 'unreachable':
      return `${error.message}. Nothing was sent; check ENGAGE_BASE_URL and the network, then try again.`;
    case 'certificate':
      return `${error.message}, so the connection was refused before anything, the key included, was sent. Nothing was sent; check ENGAGE_BASE_URL (retrying will not help).`;
    case 'cancelled':
      return mayHaveHappened ? unknownOutcome(`The call was cancelled while ${name} was in flight`, op) : `The call was cancelled; ${name} was not sent.`;
    case 'bad-response':
    case 'redirect':
    case 'server':
    case 'network':
    case 'timeout':
      return mayHaveHappened ? unknownOutcome(error.message, op) : `${error.message}. Try again later.`;
  }
}

function unknownOutcome(what: string, op: Operation | undefined): string {
  const check = op?.verifyWith ? `check with ${op.verifyWith} before trying again` : 'check the current state before trying again';
  return `${what}. The outcome is unknown: ${op?.id ?? 'the operation'} may have been carried out, so it was not repeated; ${check}.`;
}
