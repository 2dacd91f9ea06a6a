// The port through which telemetry (mcp/telemetry-spans.ts) sees each attempt of an API request.
// Absent when telemetry is off, so the request path pays nothing then. It is told the method, the
// catalog's path template and the outcome, never the key or a body.

/** One attempt of one request, as it starts. `path` is the filled path: for matching a template only, never recorded. */
export interface AttemptStart {
  method: string;
  path: string;
  /** The catalog's path template (`/campaigns/{id}/send`), when the request is an operation's own. */
  template?: string;
  /** How many attempts of this request went before (retries, rate-limit waits). */
  resendCount: number;
  origin: URL;
}

/** How the attempt ended: the API's HTTP status, or the kind of failure before one came. */
export type AttemptEnd = { status: number } | { failure: string };

export type AttemptTracer = (attempt: AttemptStart) => { end(result: AttemptEnd): void };
