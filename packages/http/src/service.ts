// Remote mode: the seven domains over the SDK's Streamable HTTP, for many tenants at once.
// `/mcp/<domain>` serves one domain's two tools and `/mcp` all fourteen. 2026-07-28 requests are
// served statelessly by the SDK's own entry (createMcpHandler); 2025-era clients get a session
// (the SDK's web-standard transport), bound to the key that opened it. The tenant's key comes
// with every request and is used for that request only: no key is configured, stored or logged.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  validateHostHeader,
  validateOriginHeader,
  type AuthInfo,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import {
  ApiClient,
  MemorySpentStore,
  Pacer,
  createServer,
  keyFingerprint,
  loadConfig,
  logSafe,
  manifestOf,
  registerViews,
  SERVER_VERSION,
  type Domain,
  type EngageServer,
  type Logger,
  type PaceKeeper,
  type SpentStore,
} from '@engage-mcp/shared';
import { Registry } from './metrics.js';

export interface ServiceOptions {
  /** The safety settings (ENGAGE_CONFIRM, ENGAGE_READ_ONLY, allow/deny), ENGAGE_BASE_URL, ENGAGE_AUTH_HEADER, ENGAGE_TIMEOUT_MS… */
  env: NodeJS.ProcessEnv;
  catalogs: Domain[];
  host?: string;
  port?: number;
  /** Host header hostnames accepted (DNS rebinding); localhost names by default. */
  allowedHosts?: string[];
  /** Origin hostnames accepted from browsers; localhost names by default. A request without Origin passes. */
  allowedOrigins?: string[];
  maxBodyBytes?: number;
  /** Calls one key may have in flight at once; more are answered 429. */
  maxConcurrentPerKey?: number;
  /** A request not answered within this is answered 504 (its call is cancelled). */
  requestTimeoutMs?: number;
  /** How long SIGTERM waits for in-flight calls. */
  drainTimeoutMs?: number;
  /**
   * How long, after SIGTERM, the service goes on serving while /readyz already says 503, so a
   * balancer takes it out of rotation before it refuses anything (0: drain at once).
   */
  drainDelayMs?: number;
  sessionIdleMs?: number;
  maxSessions?: number;
  /** Spent confirmation nonces: in-process by default (one replica), Redis for several. */
  spent?: SpentStore;
  secret?: Uint8Array;
  /** The pace of one key: a local Pacer by default, shared through Redis for several replicas. */
  pace?: (keyFingerprint: string) => PaceKeeper;
  /** One JSON log line (no newline); stderr by default. */
  writeLog?: (line: string) => void;
  logLevel?: 'error' | 'warn' | 'info' | 'debug';
}

export interface Service {
  url: string;
  server: Server;
  metrics: Registry;
  /** Stops accepting, finishes in-flight calls (up to drainTimeoutMs), then closes everything. */
  close(): Promise<void>;
}

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 8787,
  maxBodyBytes: 4 * 1024 * 1024 + 64 * 1024,
  maxConcurrentPerKey: 16,
  // Longer than a 2025 elicitation may wait for a person (10 minutes).
  requestTimeoutMs: 12 * 60 * 1000,
  drainTimeoutMs: 30_000,
  drainDelayMs: 0,
  sessionIdleMs: 30 * 60 * 1000,
  maxSessions: 10_000,
};

const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;
/** How many keys' paces are remembered (by fingerprint); the oldest is forgotten first. */
const MAX_PACES = 10_000;
const REQUEST_ID = /^[\w.:-]{1,64}$/;
const MODERN_REVISION = '2026-07-28';

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  mcp: McpServer;
  keyId: string;
  endpoint: string;
  lastSeen: number;
}

interface Endpoint {
  name: string;
  factory: (era: 'legacy' | 'modern') => McpServer;
  modern: McpHttpHandler;
}

/** Problems that keep the service from starting (bad settings): never served as answers. */
export class StartupError extends Error {}

export async function startService(options: ServiceOptions): Promise<Service> {
  const settings = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) } as typeof DEFAULTS & ServiceOptions;
  const writeLog = options.writeLog ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const level = options.logLevel ?? 'info';
  const context = new AsyncLocalStorage<{ requestId: string }>();
  const safe = logSafe([]);
  const emit = (at: keyof typeof LEVELS, message: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[at] > LEVELS[level]) return;
    const requestId = context.getStore()?.requestId;
    writeLog(JSON.stringify({ time: new Date().toISOString(), level: at, msg: safe(message), ...(requestId ? { requestId } : {}), ...fields }));
  };
  const log: Logger = { error: (m) => emit('error', m), warn: (m) => emit('warn', m), info: (m) => emit('info', m), debug: (m) => emit('debug', m) };

  // Metrics: fixed label values only.
  const metrics = new Registry();
  const requests = metrics.counter('engage_http_requests_total', 'HTTP requests by endpoint and status.');
  const latency = metrics.histogram('engage_http_request_duration_seconds', 'HTTP request latency by endpoint.');
  const calls = metrics.counter('engage_tool_calls_total', 'Tool calls by domain and outcome.');
  const callLatency = metrics.histogram('engage_tool_call_duration_seconds', 'Tool call latency by domain.');
  const throttled = metrics.counter('engage_http_throttled_total', 'Requests answered 429 (per-key concurrency limit).');
  const refused = metrics.counter('engage_http_refused_total', 'Requests refused before MCP, by reason.');
  const confirmations = metrics.counter('engage_confirmations_total', 'Confirmation tokens and requestStates presented, by outcome (redeemed: first use; replayed: refused).');
  let inflight = 0;
  const sessions = new Map<string, Session>();
  metrics.gauge('engage_http_inflight', 'MCP requests in flight.', () => inflight);
  metrics.gauge('engage_sessions_open', 'Open 2025-era sessions.', () => sessions.size);

  // Configuration: the same settings for every domain, no key.
  const configs = options.catalogs.map((domain) => ({ domain, result: loadConfig(options.env, domain.name, domain.operations.map((op) => op.id), { keyPerRequest: true }) }));
  const problems = [...new Set(configs.flatMap(({ result }) => (result.ok ? [] : result.problems)))];
  if (problems.length > 0) throw new StartupError(problems.join(' '));
  const first = configs[0]?.result;
  if (!first?.ok) throw new StartupError('no domains to serve');
  const client = new ApiClient(first.config, log);

  const store = options.spent ?? new MemorySpentStore();
  const spent: SpentStore = {
    async consume(nonce, expiresAt) {
      const firstUse = await store.consume(nonce, expiresAt);
      confirmations.inc({ outcome: firstUse ? 'redeemed' : 'replayed' });
      return firstUse;
    },
  };
  const paces = new Map<string, PaceKeeper>();
  const paceOf = (id: string): PaceKeeper => {
    let pace = paces.get(id);
    if (pace) paces.delete(id);
    else if (paces.size >= MAX_PACES) paces.delete(paces.keys().next().value as string);
    pace ??= options.pace?.(id) ?? new Pacer();
    paces.set(id, pace);
    return pace;
  };
  const onCall = ({ domain, ok, ms }: { domain: string; ok: boolean; ms: number }) => {
    calls.inc({ domain, outcome: ok ? 'ok' : 'error' });
    callLatency.observe({ domain }, ms / 1000);
  };
  // One secret for every domain (and, with Redis, every replica): random for a single replica.
  const secret = options.secret ?? randomBytes(32);
  const engines: EngageServer[] = configs.map(({ domain, result }) =>
    createServer(manifestOf(domain), async () => domain, result, { log, spent, secret, remote: { pace: paceOf }, client, onCall }),
  );

  const allInstructions = `engage-mcp: all seven domains of the Tenant Messaging and Engagement API in one server.\n\n${engines.map((engine) => engine.instructions).join('\n\n')}`;
  const endpoints = new Map<string, Endpoint>();
  const endpoint = (name: string, factory: (era: 'legacy' | 'modern') => McpServer) =>
    endpoints.set(name, {
      name,
      factory,
      modern: createMcpHandler(({ era }) => factory(era), { legacy: 'reject', maxRequestBodySize: settings.maxBodyBytes, onerror: (error) => log.debug(`modern: ${error.message}`) }),
    });
  options.catalogs.forEach((domain, index) => endpoint(`/mcp/${domain.name}`, (era) => (engines[index] as EngageServer).createMcpServer({ era })));
  endpoint('/mcp', (era) => {
    const mcp = new McpServer(
      { name: 'engage-mcp', title: 'engage-mcp: all domains', version: SERVER_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions: allInstructions },
    );
    registerViews(mcp, engines.flatMap((engine) => engine.registerTools(mcp, era)));
    return mcp;
  });

  /** The MCP face, web-standard: legacy requests to their session, the rest to the SDK's modern entry. */
  async function serveMcp(request: Request, requestOptions?: { authInfo?: AuthInfo }): Promise<Response> {
    const authInfo = requestOptions?.authInfo as AuthInfo;
    const target = endpoints.get(new URL(request.url).pathname.replace(/\/+$/, '') || '/') as Endpoint;
    // A request that names the 2026-07-28 revision in its header is never legacy (the SDK's own rule):
    // it goes straight to the modern entry, without reading its body twice.
    const modern = request.headers.get('mcp-protocol-version') === MODERN_REVISION || !(await isLegacyRequest(request, undefined, { maxRequestBodySize: settings.maxBodyBytes }));
    if (modern) return target.modern.fetch(request, { authInfo });

    const keyId = authInfo.clientId;
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session || session.endpoint !== target.name) return refusal(404, 'session_not_found', 'Session not found: start a new session (initialize).');
      if (session.keyId !== keyId) {
        refused.inc({ reason: 'session-key' });
        log.warn('a request came on a session with another key than the one that opened it; refused');
        return refusal(403, 'session_key', 'This session was opened with another API key: a session serves only the key that opened it. Start a new session with this key.');
      }
      session.lastSeen = Date.now();
      return session.transport.handleRequest(request, { authInfo });
    }
    if (request.method !== 'POST') return refusal(400, 'no_session', 'Bad Request: no session; a 2025-era client starts with initialize.');
    if (sessions.size >= settings.maxSessions) return refusal(503, 'too_many_sessions', 'Too many open sessions; try again later.', { 'retry-after': '30' });
    const mcp = target.factory('legacy');
    let opened: string | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: settings.maxBodyBytes,
      onsessioninitialized: (id) => {
        opened = id;
        sessions.set(id, { transport, mcp, keyId, endpoint: target.name, lastSeen: Date.now() });
      },
      onsessionclosed: (id) => void closeSession(id),
    } as ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0]);
    await mcp.connect(transport);
    const response = await transport.handleRequest(request, { authInfo });
    if (opened === undefined) void mcp.close().catch(() => undefined); // not an initialize: nothing to keep
    return response;
  }

  async function closeSession(id: string): Promise<void> {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.mcp.close().catch(() => undefined);
  }
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, session] of sessions) if (now - session.lastSeen > settings.sessionIdleMs) void closeSession(id);
  }, Math.min(60_000, settings.sessionIdleMs)).unref();

  const nodeMcp = toNodeHandler({ fetch: serveMcp }, { maxRequestBodySize: settings.maxBodyBytes, onerror: (error) => log.warn(`request: ${error.message}`) });
  const allowedHosts = settings.allowedHosts ?? localhostAllowedHostnames();
  const allowedOrigins = settings.allowedOrigins ?? localhostAllowedOrigins();
  const perKey = new Map<string, number>();
  let draining = false;
  /** SIGTERM came: /readyz says 503 while calls are still served, for drainDelayMs. */
  let leaving = false;
  let ready = false;
  let active = 0;
  let drained: (() => void) | undefined;

  async function handle(req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const path = (req.url ?? '/').split('?')[0]?.replace(/\/+$/, '') || '/';
    const name = endpoints.has(path) ? path : ['/healthz', '/readyz', '/metrics'].includes(path) ? path : 'other';
    res.on('close', () => {
      requests.inc({ endpoint: name, status: String(res.statusCode) });
      latency.observe({ endpoint: name }, (performance.now() - started) / 1000);
    });
    // Probes answer whatever the Host (a balancer may use an address): they say only up or not.
    if (path === '/healthz' || path === '/readyz') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method not allowed.\n');
      if (path === '/healthz') return plain(res, 200, 'ok\n');
      return ready && !leaving && !draining ? plain(res, 200, 'ready\n') : plain(res, 503, leaving || draining ? 'draining\n' : 'starting\n');
    }
    if (!endpoints.has(path) && path !== '/metrics') return send(res, 404, { error: 'not_found', message: `No such endpoint. MCP is served at /mcp and /mcp/<domain> (${options.catalogs.map((d) => d.name).join(', ')}).` });

    // DNS rebinding: the Host must be one of ours, and a browser's Origin one we allow (metrics too).
    const host = validateHostHeader(req.headers.host, allowedHosts);
    if (!host.ok) return refuse(res, 'host', 403, 'forbidden_host', `${host.message}. Allowed hosts are set with ENGAGE_ALLOWED_HOSTS.`);
    const origin = validateOriginHeader(req.headers.origin, allowedOrigins);
    if (!origin.ok) return refuse(res, 'origin', 403, 'forbidden_origin', `${origin.message}. Allowed origins are set with ENGAGE_ALLOWED_ORIGINS.`);
    if (path === '/metrics') {
      if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method not allowed.\n');
      return plain(res, 200, metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
    }

    const key = keyOf(req);
    if (key === undefined) {
      refused.inc({ reason: 'no-key' });
      res.setHeader('www-authenticate', 'Bearer realm="engage-mcp", error="invalid_request", error_description="send the tenant API key as Authorization: Bearer <key> or X-API-Key"');
      return send(res, 401, { error: 'unauthorized', message: 'No API key: send the tenant API key as Authorization: Bearer <key> or X-API-Key: <key>.' });
    }
    if (draining) {
      res.setHeader('connection', 'close');
      res.setHeader('retry-after', '1');
      return refuse(res, 'draining', 503, 'shutting_down', 'This replica is shutting down; retry.');
    }
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > settings.maxBodyBytes) {
      res.setHeader('connection', 'close');
      return refuse(res, 'body', 413, 'body_too_large', `The request body is larger than ${settings.maxBodyBytes} bytes.`);
    }

    const keyId = keyFingerprint(key);
    // Long-lived 2025 notification streams (GET) and session ends (DELETE) do not count against the limit.
    const limited = req.method === 'POST';
    if (limited) {
      const current = perKey.get(keyId) ?? 0;
      if (current >= settings.maxConcurrentPerKey) {
        throttled.inc();
        res.setHeader('retry-after', '1');
        return send(res, 429, { error: 'too_many_requests', message: `More than ${settings.maxConcurrentPerKey} calls in flight with this key; retry after a call finishes.` });
      }
      perKey.set(keyId, current + 1);
    }
    // Calls (POSTs) are what a drain waits for; a 2025 session's notification stream (GET) is closed with its session.
    inflight++;
    if (limited) active++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      inflight--;
      if (limited) {
        active--;
        const left = (perKey.get(keyId) ?? 1) - 1;
        if (left > 0) perKey.set(keyId, left);
        else perKey.delete(keyId);
      }
      if (active === 0) drained?.();
    };
    res.on('close', release);
    const deadline = limited
      ? setTimeout(() => {
          refused.inc({ reason: 'deadline' });
          log.warn(`request deadline of ${settings.requestTimeoutMs} ms passed; answering 504`);
          if (!res.headersSent) send(res, 504, { error: 'deadline', message: `No answer within ${settings.requestTimeoutMs} ms; the call was cancelled.` });
          else res.destroy();
        }, settings.requestTimeoutMs)
      : undefined;
    res.on('close', () => clearTimeout(deadline));
    // The key is handed to the SDK as this request's authInfo, and from there to this request's calls only.
    req.auth = { token: key, clientId: keyId, scopes: [] };
    try {
      await nodeMcp(req, res);
    } catch (error) {
      log.error(`unhandled: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) send(res, 500, { error: 'internal', message: 'Internal error.' });
      else res.destroy();
    }
  }

  function refuse(res: ServerResponse, reason: string, status: number, error: string, message: string): void {
    refused.inc({ reason });
    log.info(`refused (${reason}): ${message}`);
    send(res, status, { error, message });
  }

  const server = createHttpServer({ requestTimeout: settings.requestTimeoutMs + 5_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 }, (req, res) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('x-request-id', requestId);
    context.run({ requestId }, () => {
      const started = performance.now();
      res.on('close', () => {
        if (req.url?.startsWith('/mcp')) emit('info', 'request', { method: req.method, path: (req.url ?? '').split('?')[0], status: res.statusCode, ms: Math.round((performance.now() - started) * 10) / 10 });
      });
      void handle(req, res);
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  ready = true;

  let closing: Promise<void> | undefined;
  return {
    url,
    server,
    metrics,
    close: () =>
      (closing ??= (async () => {
        leaving = true;
        if (settings.drainDelayMs > 0) {
          log.info(`not ready; serving ${settings.drainDelayMs} ms more before draining`);
          await new Promise((resolve) => setTimeout(resolve, settings.drainDelayMs));
        }
        draining = true;
        log.info(`draining: ${active} call(s) in flight`);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (active > 0) {
          await new Promise<void>((resolve) => {
            drained = resolve;
            setTimeout(resolve, settings.drainTimeoutMs).unref();
          });
        }
        clearInterval(sweep);
        await Promise.allSettled([...sessions.keys()].map(closeSession));
        await Promise.allSettled([...endpoints.values()].map((each) => each.modern.close()));
        server.closeAllConnections();
        await stopped;
        await Promise.allSettled(engines.map((engine) => engine.close()));
        await client.close();
        log.info('stopped');
      })()),
  };
}

/** The tenant's key: Authorization: Bearer …, else X-API-Key. A value with spaces or control characters is no key. */
export function keyOf(req: IncomingMessage): string | undefined {
  const authorization = req.headers.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  const header = req.headers['x-api-key'];
  const key = bearer ?? (typeof header === 'string' ? header.trim() : undefined);
  return key && !/[\s\p{Cc}]/u.test(key) && key.length <= 1024 ? key : undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

function plain(res: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/**
 * A refusal at the HTTP layer, before any MCP message is read (session routing), in the same
 * {error, message} shape as the service's other refusals: the protocol's own errors are the SDK's.
 */
function refusal(status: number, error: string, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error, message }, { status, headers: { 'cache-control': 'no-store', ...headers } });
}
