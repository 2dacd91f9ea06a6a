// Typed errors: what went wrong, so the answer can tell the truth about it (call/outcomes.ts says
// it to the model). An InputError's message is already a whole answer: nothing was sent.
import type { Operation } from './types.js';

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
      /** A 404 whose body was not JSON (a proxy's page, say), in words: no route of the API answered, not a missing record. */
      notApiBody?: string;
      /** The same request gets the same failure: an answer larger than this server reads. */
      lasting?: boolean;
      /** For stderr logs only (a 5xx body, a low-level error code); never shown to the model. */
      logDetail?: string;
    } = {},
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}
