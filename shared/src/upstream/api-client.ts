// The one request helper every operation goes through: one keep-alive pool per process, a
// deadline on every attempt, the shared pace, 429 handling, retries for safe operations only,
// and every failure raised as a typed UpstreamError.
import type { Dispatcher } from 'undici';
import type { Config } from '../model/config.js';
import { UpstreamError } from '../model/errors.js';
import { PRE_CUT, type Logger } from '../safe/log.js';
import {
  MAX_RATE_LIMIT_RETRIES,
  MAX_SAFE_RETRIES,
  Pacer,
  type PaceKeeper,
  type UpstreamSlots,
  backoffDelayMs,
  isRetryableStatus,
  parseIntegerHeader,
  parseRetryAfter,
} from './pacing.js';
import { keyRedactor, type Redact } from '../safe/redact.js';
import { cleanText, quotedText } from '../safe/sanitize.js';
import type { AttemptTracer } from './tracing.js';

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the base URL, already encoded. */
  path: string;
  body?: unknown;
  /** Safe (read-only) requests may be repeated after a network error; others never are. */
  safe: boolean;
  /**
   * A preview's look-up: one short attempt (LOOKUP_TIMEOUT_MS), no retries, no rate-limit waits,
   * so a slow API never holds the question back: the preview says the record could not be read
   * (catalog.ts notShown), and leaves out a fact that moves on its own (the quota).
   */
  lookup?: boolean;
  /** Reads a 2xx body its own way (a large list, streamed: stream-list.ts); others are read whole. */
  readBody?: () => BodySink;
  /** The catalog's path template, for telemetry: the filled path (with ids) is never recorded. */
  template?: string;
}

/**
 * Takes a body's chunks (within the size limit) and ends with its text, or with its text's
 * beginning and the body already parsed (`parsed`: undefined when it is not JSON).
 */
export interface BodySink {
  write(chunk: Buffer): void;
  end(): { text: string } | { text: string; parsed: unknown };
}

export interface CallContext {
  signal?: AbortSignal;
  /** Told before every wait (rate limit, pacing, backoff), so the host can show progress. */
  onWait?: (waitMs: number, reason: string) => void;
  /**
   * Remote mode: the caller's own key, for this call only (never kept), and the pace of that key.
   * Without it, the configured key and the client's pace.
   */
  credentials?: { apiKey: string; pace?: PaceKeeper; slots?: UpstreamSlots };
  /** Telemetry is on: one span per attempt (upstream/tracing.ts). */
  traceAttempt?: AttemptTracer;
  /** Called right before each attempt, after every wait: a write whose mark another server took over meanwhile throws (nothing sent). */
  beforeSend?: () => Promise<void>;
  /** Where this call's lines go (remote mode: its request's log); the client's own log by default. */
  log?: Logger;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const LOOKUP_TIMEOUT_MS = 4_000;
/** The API's own explanation of a failure is quoted up to this length. */
const MAX_API_MESSAGE = 300;
const USER_AGENT = 'engage-mcp/0.1.0';
/** HTTP's reason phrases (node:http's), set when the pool module loads: every answer comes through it. */
let reasonPhrases: Readonly<Record<number, string | undefined>> = {};
// Codes of a connection that failed. They say nothing was sent only for a request not yet written
// to a socket: a pooled keep-alive socket reports EHOSTUNREACH too, after the request went out on it.
const CONNECTION_FAILURE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);
/** A TLS handshake that failed on the certificate: nothing (not even the key) was sent, and repeating will not help. */
const CERTIFICATE_CODE = /^(CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|ERR_TLS_CERT|HOSTNAME_MISMATCH|ERR_SSL_)/;

/** How far one attempt's exchange got, as its handler saw it. */
interface AttemptProgress {
  /** The request was handed to a connected socket (its first bytes were being written). */
  written: boolean;
  /** The API's answer had begun (status and headers). */
  answered: boolean;
  /** The status of the answer that had begun. */
  status?: number;
}

/** How far one attempt got, for telling what its failure means. */
interface AttemptState extends AttemptProgress {
  callerSignal: AbortSignal | undefined;
  deadline: AttemptDeadline;
  /** The attempt's own deadline in ms (a preview's look-up has a shorter one than ENGAGE_TIMEOUT_MS). */
  timeoutMs: number;
  /** The call's log (see CallContext.log). */
  log: Logger;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Set when a BodySink parsed the body itself. */
  parsed?: unknown;
}

export class ApiClient {
  private dispatcher: Promise<Dispatcher> | undefined;
  private readonly basePath: string;
  private readonly redact: Redact;
  /** Aborted once the server stops taking writes (stopWrites): a write's wait ends then, and no attempt of a write begins after it. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly config: Pick<Config, 'apiKey' | 'baseUrl' | 'authHeader' | 'timeoutMs' | 'maxRetryWaitSeconds'>,
    private readonly log: Logger,
    private readonly pacer: PaceKeeper = new Pacer(),
  ) {
    this.basePath = config.baseUrl.pathname.replace(/\/+$/, '');
    this.redact = keyRedactor([config.apiKey]);
  }

  /** The header that carries the key: the call's own (remote mode), else the configured one. */
  private authHeaders(ctx: CallContext): Record<string, string> {
    const key = ctx.credentials?.apiKey ?? this.config.apiKey;
    return this.config.authHeader === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  }

  /** Sends the request and returns the envelope's `data`, or throws UpstreamError. */
  async request(req: ApiRequest, ctx: CallContext = {}): Promise<unknown> {
    const pacer = ctx.credentials?.pace ?? this.pacer;
    // A write's waits also end when the server stops: it is not sent then (a 429 was not carried out).
    const stop = req.safe ? undefined : this.stopping.signal;
    let failures = 0;
    let rateLimited = 0;
    for (;;) {
      await this.pace(ctx, pacer, req.lookup ? 0 : this.config.maxRetryWaitSeconds * 1000, stop);
      let response: RawResponse;
      try {
        response = await this.inSlot(req, ctx, failures + rateLimited);
      } catch (error) {
        const failure = error as UpstreamError;
        const repeatable = failure.kind === 'unreachable' || (req.safe && (failure.kind === 'network' || failure.kind === 'timeout'));
        if (repeatable && !req.lookup && failures < MAX_SAFE_RETRIES) {
          await this.backoff(failures++, failure.message, ctx, stop);
          continue;
        }
        throw failure;
      }
      await pacer.observe(
        parseIntegerHeader(header(response, 'ratelimit-limit')),
        parseIntegerHeader(header(response, 'ratelimit-remaining')),
        parseIntegerHeader(header(response, 'ratelimit-reset')),
      );
      if (response.status === 429) {
        // A 429 was not carried out, so repeating it is safe for every operation.
        const seconds = parseRetryAfter(header(response, 'retry-after'));
        await pacer.hold(seconds * 1000, this.config.maxRetryWaitSeconds * 1000);
        if (req.lookup || rateLimited >= MAX_RATE_LIMIT_RETRIES || seconds > this.config.maxRetryWaitSeconds) {
          throw new UpstreamError('rate-limited', 'rate limit exhausted', { status: 429, retryAfterSeconds: Math.max(1, seconds) });
        }
        rateLimited++;
        continue; // pace() waits for the held slot
      }
      if (req.safe && !req.lookup && isRetryableStatus(response.status) && failures < MAX_SAFE_RETRIES) {
        await this.backoff(failures++, `HTTP ${response.status}`, ctx, stop);
        continue;
      }
      return this.interpret(req, response, ctx);
    }
  }

  /**
   * The server is stopping (a stdio server's host closed it or signalled it): a write not yet at
   * the API (waiting out a 429's Retry-After, the pace, a backoff) is not sent, and its wait ends
   * now, so the exit neither cuts it off at the API nor waits for it. One already sent runs on.
   */
  stopWrites(): void {
    this.stopping.abort();
  }

  async close(): Promise<void> {
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    if (dispatcher) await (await dispatcher).destroy().catch(() => undefined);
  }

  private async pace(ctx: CallContext, pacer: PaceKeeper, maxWaitMs: number, stop: AbortSignal | undefined): Promise<void> {
    const waitMs = await pacer.reserve(maxWaitMs);
    if (waitMs === undefined) {
      const seconds = Math.max(1, Math.ceil((await pacer.waitEstimateMs()) / 1000));
      throw new UpstreamError('rate-limited', 'rate limit exhausted', { retryAfterSeconds: seconds });
    }
    if (waitMs > 0) {
      ctx.onWait?.(waitMs, 'waiting for the API rate limit');
      await sleep(waitMs, ctx.signal, stop);
    }
  }

  private async backoff(attempt: number, reason: string, ctx: CallContext, stop: AbortSignal | undefined): Promise<void> {
    const waitMs = backoffDelayMs(attempt);
    (ctx.log ?? this.log).info(`retrying after ${reason} in ${waitMs} ms`);
    ctx.onWait?.(waitMs, `retrying after ${reason}`);
    await sleep(waitMs, ctx.signal, stop);
  }

  private getDispatcher(): Promise<Dispatcher> {
    // Created on first use: a server that is never called never loads undici or opens a socket.
    this.dispatcher ??= import('./undici-pool.js').then(({ Pool, STATUS_CODES }) => {
      reasonPhrases = STATUS_CODES;
      return new Pool(this.config.baseUrl.origin, {
        // Always verify the API's certificate: no environment variable (NODE_TLS_REJECT_UNAUTHORIZED) can switch it off.
        connect: { rejectUnauthorized: true },
        connections: 16,
        pipelining: 1,
        connectTimeout: Math.min(this.config.timeoutMs, 10_000),
        keepAliveTimeout: 4_000,
      });
    });
    return this.dispatcher;
  }

  /** One attempt, inside the caller's upstream slot when it has one (remote mode); a wait for the slot sends nothing. */
  private async inSlot(req: ApiRequest, ctx: CallContext, resendCount: number): Promise<RawResponse> {
    if (!req.safe && this.stopping.signal.aborted) throw new UpstreamError('cancelled', 'the server is stopping', { mayHaveHappened: false });
    const slots = ctx.credentials?.slots;
    if (!slots) {
      await ctx.beforeSend?.();
      return this.attempt(req, ctx, resendCount);
    }
    const release = await slots.acquire(ctx.signal).catch(() => {
      throw new UpstreamError('cancelled', 'cancelled', { mayHaveHappened: false });
    });
    let status: number | undefined;
    try {
      await ctx.beforeSend?.();
      const response = await this.attempt(req, ctx, resendCount);
      status = response.status;
      return response;
    } finally {
      release(status);
    }
  }

  /** One attempt, in its own span when telemetry is on. */
  private async attempt(req: ApiRequest, ctx: CallContext, resendCount: number): Promise<RawResponse> {
    const span = ctx.traceAttempt?.({ method: req.method, path: req.path, template: req.template, resendCount, origin: this.config.baseUrl });
    if (!span) return this.once(req, ctx);
    try {
      const response = await this.once(req, ctx);
      span.end({ status: response.status });
      return response;
    } catch (error) {
      span.end({ failure: error instanceof UpstreamError ? error.kind : 'network' });
      throw error;
    }
  }

  private async once(req: ApiRequest, ctx: CallContext): Promise<RawResponse> {
    const callerSignal = ctx.signal;
    if (callerSignal?.aborted) throw new UpstreamError('cancelled', 'cancelled', { mayHaveHappened: false });
    const dispatcher = await this.getDispatcher();
    // A stop that landed during the attempt's awaits (the mark's renewal, the first load of undici): no write begins after it.
    if (!req.safe && this.stopping.signal.aborted) throw new UpstreamError('cancelled', 'the server is stopping', { mayHaveHappened: false });
    const timeoutMs = req.lookup ? Math.min(this.config.timeoutMs, LOOKUP_TIMEOUT_MS) : this.config.timeoutMs;
    // A write, once it leaves, is not abandoned when the host cancels: it runs to its answer within
    // its deadline, so the server learns (and remembers) whether it was carried out. A host that
    // times out and asks again is then told about the first attempt instead of sending twice.
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const deadline = attemptDeadline(timeoutMs, req.safe ? callerSignal : undefined);
    const progress: AttemptProgress = { written: false, answered: false };
    try {
      return await exchange(
        dispatcher,
        {
          origin: this.config.baseUrl.origin,
          path: this.basePath + req.path,
          method: req.method,
          headers: {
            accept: 'application/json',
            'user-agent': USER_AGENT,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...this.authHeaders(ctx),
          },
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        deadline,
        (ok) => (ok ? req.readBody?.() : undefined) ?? wholeBody(),
        progress,
      );
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      throw this.classify(error, req, { callerSignal, deadline, timeoutMs, ...progress, log: ctx.log ?? this.log });
    } finally {
      deadline.end();
    }
  }

  private classify(error: unknown, req: ApiRequest, attempt: AttemptState): UpstreamError {
    const { callerSignal, deadline, timeoutMs, written, answered, status, log } = attempt;
    const code = errorCode(error);
    // A request never handed to a socket was not received, whatever the error; one that was may have been.
    const mayHaveHappened = !req.safe && written;
    log.debug(`${req.method} ${req.path} failed: ${code ?? ''} ${error instanceof Error ? error.message : String(error)}`);
    if (callerSignal?.aborted) {
      return new UpstreamError('cancelled', 'cancelled', { mayHaveHappened });
    }
    if (code !== undefined && CERTIFICATE_CODE.test(code)) {
      return new UpstreamError('certificate', `The API at ${this.config.baseUrl.origin} presented a TLS certificate that is not valid (${code})`, {
        logDetail: code,
      });
    }
    if (!written && code !== undefined && CONNECTION_FAILURE_CODES.has(code)) {
      return new UpstreamError('unreachable', `Could not connect to the API at ${this.config.baseUrl.origin} (${code})`, { logDetail: code });
    }
    if (deadline.timedOut() && !written) {
      // It waited for a connection (all busy with other calls, or one slow to open) and never left.
      return new UpstreamError(
        'timeout',
        `The request was not sent within ${timeoutMs} ms: no connection to the API was free or opened in time (ENGAGE_TIMEOUT_MS)`,
        { mayHaveHappened: false, logDetail: code },
      );
    }
    if (deadline.timedOut() || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      // An answer that had begun (a 200's status line, say) is said to have: for a write, it tells the most of its outcome.
      const begun = answered && status !== undefined ? ` in full: its answer had begun (HTTP ${status}), but the rest did not arrive in time` : '';
      return new UpstreamError('timeout', `The API did not answer within ${timeoutMs} ms${begun} (ENGAGE_TIMEOUT_MS)`, {
        mayHaveHappened,
        logDetail: code,
      });
    }
    // A content-length mismatch on a status that has a body is a body cut short by the connection closing
    // (`connection: close`), the same break keep-alive reports as "other side closed": a broken connection, below.
    if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' && status === 304) {
      // A 304 may declare the length of the answer it stands for (RFC 9110): it is told as the 304 it is.
      return new UpstreamError('bad-response', notModified(), { status, mayHaveHappened, logDetail: code });
    }
    if ((code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' && status === 204) || (error instanceof Error && error.name === 'HTTPParserError')) {
      // Something answered, but not in HTTP/1.1 (no status line, a broken chunk size, a 204 with a body).
      return new UpstreamError('bad-response', "The API's answer did not follow HTTP/1.1, so it was not read", {
        mayHaveHappened,
        logDetail: code ?? 'HTTPParserError',
      });
    }
    if (code === 'UND_ERR_HEADERS_OVERFLOW') {
      // The API did answer: its headers were more than the HTTP client reads (16 KiB). Asking again gets the same.
      return new UpstreamError('bad-response', 'The API answered with headers larger than this server reads (16 KiB), so its answer was not read', {
        mayHaveHappened,
        logDetail: code,
      });
    }
    if (code === 'BODY_TOO_LARGE') {
      return new UpstreamError('bad-response', `The API's answer was larger than ${MAX_BODY_BYTES / 1024 / 1024} MiB and was not read`, {
        mayHaveHappened,
        lasting: true,
      });
    }
    return new UpstreamError('network', answered ? 'The connection broke while the API was answering' : 'The connection to the API broke before it answered', {
      mayHaveHappened,
      logDetail: code,
    });
  }

  private interpret(req: ApiRequest, response: RawResponse, ctx: CallContext): unknown {
    // The call's own key is redacted too (remote mode); the configured one always is.
    const redact = ctx.credentials ? keyRedactor([ctx.credentials.apiKey, this.config.apiKey]) : this.redact;
    const { status } = response;
    const reason = `HTTP ${status}${reasonPhrases[status] ? ` ${reasonPhrases[status]}` : ''}`;
    const parsed = 'parsed' in response ? response.parsed : parseJson(response.text);
    if (status >= 200 && status < 300) {
      if (parsed === undefined) {
        // The logger cleans, redacts, escapes and cuts the body, in that order.
        (ctx.log ?? this.log).warn(
          `${req.method} ${req.path}: ${reason} with a body that is not JSON: ${ctx.credentials ? bodyForLog(response.text, redact) : response.text}`,
        );
        throw new UpstreamError('bad-response', `The API answered ${reason} but its body was ${describeBody(response)}`, {
          status,
          mayHaveHappened: !req.safe,
        });
      }
      if (!isEnvelope(parsed)) {
        throw new UpstreamError('bad-response', `The API answered ${reason} without its {status, errorCode, data} envelope`, {
          status,
          mayHaveHappened: !req.safe,
        });
      }
      if (parsed.errorCode === 0 && parsed.status >= 200 && parsed.status < 300) return parsed.data;
      throw this.envelopeFailure(req, reason, parsed, redact, ctx.log ?? this.log);
    }
    if (status === 304) {
      // Not a redirect: "not modified" answers a conditional request, and this server never sends one.
      throw new UpstreamError('bad-response', notModified(), {
        status,
        mayHaveHappened: !req.safe,
      });
    }
    if (status >= 300 && status < 400) {
      throw new UpstreamError('redirect', `The API answered with a redirect (${reason}), which is not followed so the key stays with ENGAGE_BASE_URL`, {
        status,
        mayHaveHappened: !req.safe,
      });
    }
    if (status >= 400 && status < 500) {
      const failure = clientFailure(status, reason, this.messageOf(parsed, redact));
      // A 404 with a body that is not JSON (a page) is not the API's "no such record": the request reached no route of it.
      if (failure.kind === 'not-found' && parsed === undefined && response.text.trim() !== '') failure.details.notApiBody = describeBody(response);
      throw failure;
    }
    // 5xx: the body goes to the log (made safe there), never to the model.
    (ctx.log ?? this.log).warn(`${req.method} ${req.path}: ${reason}: ${ctx.credentials ? bodyForLog(response.text, redact) : response.text}`);
    throw new UpstreamError('server', `The API failed with ${reason}`, { status, mayHaveHappened: !req.safe });
  }

  /**
   * A 2xx whose envelope reports an error (a status outside 2xx, or a non-zero errorCode) is an
   * error: a 4xx status there is a refusal like an HTTP 4xx; anything else is a failure whose
   * outcome, for a write, is unknown.
   */
  private envelopeFailure(req: ApiRequest, reason: string, envelope: { status: number; errorCode: number }, redact: Redact, log: Logger): UpstreamError {
    const apiMessage = this.messageOf(envelope, redact);
    if (envelope.status >= 400 && envelope.status < 500)
      return clientFailure(envelope.status, `${reason}, status ${envelope.status} in its envelope`, apiMessage);
    log.warn(
      `${req.method} ${req.path}: ${reason} with an error in its envelope: status ${envelope.status}, errorCode ${envelope.errorCode}${apiMessage ? `: ${quotedText(apiMessage)}` : ''}`,
    );
    return new UpstreamError(
      'server',
      `The API answered ${reason} but its envelope reports a failure (status ${envelope.status}, errorCode ${envelope.errorCode}${apiMessage ? `: ${quotedText(apiMessage)}` : ''})`,
      { status: envelope.status, mayHaveHappened: !req.safe },
    );
  }

  /** The API's own explanation of a failure, if its body has one: cleaned, then redacted, then cut. */
  private messageOf(parsed: unknown, redact: Redact): string | undefined {
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const record = parsed as Record<string, unknown>;
    for (const key of ['message', 'error', 'errorMessage', 'detail']) {
      const value = record[key];
      if (typeof value !== 'string' || value.trim() === '') continue;
      // A huge message is cut well past what is shown first (redaction is told, see redact.ts).
      const long = value.length > MAX_API_MESSAGE * 8;
      const clean = redact(cleanText(long ? value.slice(0, MAX_API_MESSAGE * 8) : value), { cutAtEnd: long })
        .replace(/\s+/g, ' ')
        .trim();
      return clean.length > MAX_API_MESSAGE || long ? `${clean.slice(0, MAX_API_MESSAGE)}…` : clean;
    }
    return undefined;
  }
}

/** An HTTP 4xx (or a 4xx status inside an envelope): the API refused; nothing was carried out. */
function clientFailure(status: number, reason: string, apiMessage: string | undefined): UpstreamError {
  if (status === 401) return new UpstreamError('auth', reason, { status, apiMessage });
  if (status === 403) return new UpstreamError('scope', reason, { status, apiMessage });
  if (status === 404) return new UpstreamError('not-found', reason, { status, apiMessage });
  if (status === 429) return new UpstreamError('rate-limited', reason, { status, apiMessage });
  return new UpstreamError('rejected', reason, { status, apiMessage });
}

/**
 * One request and its answer through undici's handler API: the body's chunks go straight to
 * `sinkFor` (at most MAX_BODY_BYTES), with no stream or async iterator between. `progress` tells
 * whether the request was handed to a socket (a write then may have happened) and whether the API
 * began to answer. `deadline` ends the exchange at once, whatever its stage.
 */
function exchange(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  deadline: AttemptDeadline,
  sinkFor: (ok: boolean) => BodySink,
  progress: AttemptProgress,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    if (deadline.stopped) return reject(deadline.reason);
    const handler = new ExchangeHandler(deadline, sinkFor, progress, resolve, reject);
    deadline.onStop(handler.stop);
    dispatcher.dispatch(options, handler);
  });
}

/**
 * The handler of one exchange: each of undici's callbacks is a step of the answer (started, its
 * status and headers, each chunk, its end, a failure), and the first end of any kind settles it.
 * A class, so its callbacks are shared methods: an exchange costs one object, not a closure each.
 */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private status = 0;
  private headers: RawResponse['headers'] = {};
  private sink: BodySink = wholeBody();
  private size = 0;

  constructor(
    private readonly deadline: AttemptDeadline,
    private readonly sinkFor: (ok: boolean) => BodySink,
    private readonly progress: AttemptProgress,
    private readonly resolve: (response: RawResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  /** Ends the exchange at once, whatever its stage: the deadline's stop, and a failure while reading. */
  readonly stop = (error: unknown): void => {
    if (this.controller && !this.controller.aborted) this.controller.abort(error as Error);
    this.settle(error);
  };

  onRequestStart(started: Dispatcher.DispatchController): void {
    this.controller = started;
    this.progress.written = true;
    if (this.settled) started.abort(this.deadline.reason as Error);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, responseHeaders: RawResponse['headers']): void {
    this.progress.answered = true;
    this.progress.status = statusCode;
    this.status = statusCode;
    this.headers = responseHeaders;
    try {
      this.sink = this.sinkFor(statusCode >= 200 && statusCode < 300);
    } catch (error) {
      this.stop(error);
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > MAX_BODY_BYTES) {
      this.stop(Object.assign(new Error('body too large'), { code: 'BODY_TOO_LARGE' }));
      return;
    }
    try {
      this.sink.write(chunk);
    } catch (error) {
      this.stop(error);
    }
  }

  onResponseEnd(): void {
    try {
      this.settle(undefined, { status: this.status, headers: this.headers, ...this.sink.end() });
    } catch (error) {
      this.settle(error);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settle(error);
  }

  private settle(error: unknown, response?: RawResponse): void {
    if (this.settled) return;
    this.settled = true;
    this.deadline.onStop(undefined);
    if (response) this.resolve(response);
    else this.reject(error);
  }
}

/**
 * A body for a log line in remote mode, redacted with the request's key: cut first, as the logger
 * cuts (so a body of 60 MB costs what one of 32 KB does, and holds up no other tenant), with the
 * start of a form left at the cut redacted too.
 */
export function bodyForLog(text: string, redact: Redact): string {
  const cut = text.length > PRE_CUT;
  return redact(cut ? text.slice(0, PRE_CUT) : text, { cutAtEnd: cut });
}

/** One attempt's end: its deadline or, when given, the caller's cancel, whichever comes first. */
interface AttemptDeadline {
  /** Why the attempt was stopped, once it was (else undefined). */
  readonly reason: unknown;
  readonly stopped: boolean;
  timedOut(): boolean;
  /** The one function called, with the reason, when the attempt is stopped; undefined lets go of it. */
  onStop(stop: ((reason: unknown) => void) | undefined): void;
  /** Stops the timer and lets go of the caller's signal: the attempt is over. */
  end(): void;
}

/**
 * One attempt's deadline: a timer and, when given, a listener on the caller's signal, cleared when
 * the attempt ends. A callback rather than an AbortSignal, since undici's handler API is stopped
 * through its controller: an AbortController per attempt (its EventTarget and listeners) showed as
 * about 2% of a small read's CPU, and AbortSignal.timeout and AbortSignal.any (weak references and
 * finalizers) as about 4% before that.
 */
function attemptDeadline(timeoutMs: number, callerSignal: AbortSignal | undefined): AttemptDeadline {
  let reason: unknown;
  let stopped = false;
  let timedOut = false;
  let listener: ((reason: unknown) => void) | undefined;
  const stop = (why: unknown) => {
    if (stopped) return;
    stopped = true;
    reason = why;
    listener?.(why);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, timeoutMs);
  const onCancel = () => stop(callerSignal?.reason);
  // The caller may have cancelled while the attempt waited for its connection pool: an abort
  // event that has already fired is never heard again.
  if (callerSignal?.aborted) onCancel();
  else callerSignal?.addEventListener('abort', onCancel, { once: true });
  return {
    get reason() {
      return reason;
    },
    get stopped() {
      return stopped;
    },
    timedOut: () => timedOut,
    onStop(fn) {
      listener = fn;
    },
    end: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCancel);
      listener = undefined;
    },
  };
}

function header(response: RawResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  if (error instanceof Error && error.name === 'AbortError') return 'UND_ERR_ABORTED';
  return undefined;
}

function wholeBody(): BodySink {
  const chunks: Buffer[] = [];
  return { write: (chunk) => void chunks.push(chunk), end: () => ({ text: Buffer.concat(chunks).toString('utf8') }) };
}

/** A body's JSON, or undefined when it is blank or not JSON (the streamed list reader uses the same rule). */
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A 304 ("not modified") answers a conditional request, and this server never sends one. */
function notModified(): string {
  return 'The API answered HTTP 304 Not Modified to a request that was not conditional, with no body to read';
}

function isEnvelope(value: unknown): value is { status: number; errorCode: number; data: unknown } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    // Integers, as the API documents them: a status of 200.5 is no 2xx, nor any status.
    Number.isInteger((value as Record<string, unknown>).status) &&
    Number.isInteger((value as Record<string, unknown>).errorCode) &&
    'data' in value
  );
}

function describeBody(response: RawResponse): string {
  const type = String(header(response, 'content-type') ?? '');
  // Nothing is unpacked (a compressed body could be a bomb), and no encoding is asked for.
  const encoding = String(header(response, 'content-encoding') ?? '').trim();
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    // Only a known name is repeated: the header is the API's text, and could carry anything (the key too).
    const known = /^(x-)?(gzip|br|deflate|zstd|compress)$/i.test(encoding) ? ` (${encoding.toLowerCase()})` : '';
    return `compressed${known}, which this server did not ask for and does not unpack`;
  }
  if (response.text.trim() === '') return 'empty';
  if (type.includes('html') || /^\s*</.test(response.text)) return 'an HTML page, not JSON';
  return 'not valid JSON (truncated or malformed)';
}

/** Waits `ms`, or rejects as cancelled once `signal` (the caller's) or `stop` (the server's stop, for a write) aborts. */
export function sleep(ms: number, signal?: AbortSignal, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted || stop?.aborted) {
      reject(new UpstreamError('cancelled', 'cancelled', { mayHaveHappened: false }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      stop?.removeEventListener('abort', onAbort);
      reject(new UpstreamError('cancelled', 'cancelled', { mayHaveHappened: false }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      stop?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    stop?.addEventListener('abort', onAbort, { once: true });
  });
}
