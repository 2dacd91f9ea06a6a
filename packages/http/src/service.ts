// Remote mode: the seven domains over the SDK's Streamable HTTP, for many tenants at once.
// `/mcp/<domain>` serves one domain's two tools and `/mcp` all fourteen. 2026-07-28 requests are
// served statelessly by the SDK's own entry (createMcpHandler); 2025-era clients get a session
// (the SDK's web-standard transport), bound to the key that opened it. The tenant's key comes
// with every request and is used for that request only: no key is configured, stored or logged.
// The parts: engines.ts (configuration), mcp.ts (the MCP face), sessions.ts, guards.ts (what a
// request must pass), handler.ts (the request handler), endpoints.ts (/healthz, /readyz, /metrics),
// drain.ts, metrics.ts, log.ts, respond.ts.
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localhostAllowedHostnames, localhostAllowedOrigins } from '@modelcontextprotocol/server';
import {
  keyFingerprint,
  MemorySpentStore,
  type Domain,
  type EngageServer,
  type GuardStore,
  type PaceKeeper,
  type SpentStore,
  type Telemetry,
} from '@engage-mcp/shared';
import { CONFIRMATION_BUDGET, ConfirmationBudget, type ConfirmationBudgetLimits } from './confirmation-budget.js';
import { ConnectionCap } from './connections.js';
import { RedisGuardStore } from './redis-guard-store.js';
import { Drain } from './drain.js';
import { StartupError, startEngines, type Engines } from './engines.js';
import { Fairness } from './fairness.js';
import { createGuards } from './guards.js';
import { requestHandler, type RequestHandler } from './handler.js';
import { PROBE_PATHS } from './endpoints.js';
import { pathOf } from './exchange.js';
import { createJsonLog, requestLogOf, type JsonLog, type LogLevel } from './log.js';
import { mcpEndpoints, mcpHandler, type McpEndpoint } from './mcp.js';
import { createServiceMetrics, type ServiceMetrics } from './metrics.js';
import { createOAuth, type OAuth, type OAuthOptions } from './oauth/index.js';
import { Sessions } from './sessions.js';
import { StalledAnswers } from './stalls.js';

export { StartupError } from './engines.js';
export { keyOf } from './guards.js';

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
  /** Open TCP connections, all clients together (0: no cap); more are answered 503 (connections.ts). */
  maxConnections?: number;
  /** Open TCP connections from one client address (0: no cap, the default: behind a proxy every connection is the proxy's). */
  maxConnectionsPerAddress?: number;
  /** Upstream requests one key may have at once (fairness.ts): more wait for that key's own slots. */
  upstreamPerKey?: number;
  /** Upstream requests all keys the API has not accepted yet may have at once, together. */
  upstreamUnaccepted?: number;
  /** A request not answered within this is answered 504 (a read is stopped; a write already sent runs to its end). */
  requestTimeoutMs?: number;
  /**
   * A request whose headers and body have not all come within this is answered 408 and its
   * connection closed (a body that trickles or never ends). Only the receiving: the answer may take
   * up to requestTimeoutMs. The headers alone have at most 30 s of it.
   */
  receiveTimeoutMs?: number;
  /**
   * A connection with an answer waiting to go out, of which the client takes nothing for this long,
   * is closed (stalls.ts): a client that never reads must not keep its answer in memory.
   */
  unreadAnswerMs?: number;
  /** How long SIGTERM waits for in-flight calls. */
  drainTimeoutMs?: number;
  /**
   * How long, after SIGTERM, the service goes on serving while /readyz already says 503, so a
   * balancer takes it out of rotation before it refuses anything (0: drain at once).
   */
  drainDelayMs?: number;
  sessionIdleMs?: number;
  /** 2025 sessions of keys the API has accepted, all together; more are refused (503). */
  maxSessions?: number;
  /** 2025 sessions of one key; a new one closes that key's least recently used. */
  maxSessionsPerKey?: number;
  /** 2025 sessions of keys not yet accepted (new or made-up), all together; a new one closes the least recently used of them. */
  maxUnacceptedSessions?: number;
  /** Spent confirmation nonces: in-process by default (one replica), Redis for several. */
  spent?: SpentStore;
  /** Confirmations each key may spend per 10 minutes while spent ones are kept in this process (confirmation-budget.ts). */
  confirmationBudget?: ConfirmationBudgetLimits;
  /** Calls in flight of all keys the API has not accepted yet, together (guards.ts); 256 by default. */
  unacceptedInFlight?: number;
  /** Of those, the most one client address may hold (guards.ts); a quarter of unacceptedInFlight by default. */
  unacceptedInFlightPerAddress?: number;
  /**
   * Proxies in front whose X-Forwarded-For names the client (ENGAGE_TRUSTED_PROXY_HOPS), for the
   * limits by address; OAuth's own setting when not given.
   */
  trustedProxyHops?: number;
  secret?: Uint8Array;
  /** The pace of one key: a local Pacer by default, shared through Redis for several replicas. */
  pace?: (keyFingerprint: string) => PaceKeeper;
  /** The guardrails' state (ENGAGE_CAP_*, idempotency keys, the audit record): in-process by default (one replica), Redis for several. */
  guardStore?: GuardStore;
  /** One JSON log line (no newline); stderr by default. */
  writeLog?: (line: string) => void;
  logLevel?: LogLevel;
  /** OAuth beside the key header (ENGAGE_OAUTH_KEK, ENGAGE_PUBLIC_URL); off when unset. */
  oauth?: OAuthOptions;
  /** OpenTelemetry, when it is on (startTelemetry): a span per tool call. close() flushes and stops it. */
  telemetry?: Telemetry;
}

export interface Service {
  url: string;
  server: Server;
  metrics: ServiceMetrics;
  /** Stops accepting, finishes in-flight calls (up to drainTimeoutMs), then closes everything. */
  close(): Promise<void>;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8787,
  maxBodyBytes: 4 * 1024 * 1024 + 64 * 1024,
  maxConcurrentPerKey: 16,
  // Above the sessions' own bounds' worth of notification streams at peak use, under a 20,000 descriptor limit.
  maxConnections: 16_384,
  maxConnectionsPerAddress: 0,
  // The pool has 16 connections: one key holds at most a quarter, made-up keys an eighth between them.
  upstreamPerKey: 4,
  upstreamUnaccepted: 2,
  // Longer than a 2025 elicitation may wait for a person (10 minutes).
  requestTimeoutMs: 12 * 60 * 1000,
  // A 4 MiB body at 70 KB/s; an MCP message is a few KiB.
  receiveTimeoutMs: 60_000,
  // As long as a request may take to arrive: an answer of 4 MiB taken at 70 KB/s is not cut.
  unreadAnswerMs: 60_000,
  drainTimeoutMs: 30_000,
  drainDelayMs: 0,
  sessionIdleMs: 30 * 60 * 1000,
  maxSessions: 10_000,
  maxSessionsPerKey: 100,
  // About 24 KiB each (10,000 took 237 MiB): made-up keys hold at most ~24 MiB, and never an accepted key's place.
  maxUnacceptedSessions: 1_000,
  // Calls of keys not yet accepted share 2 upstream slots, so more in flight only wait: a few hundred
  // is a deep queue, and bounds what anyone without a key can hold (bodies up to 4 MiB each).
  unacceptedInFlight: 256,
};

type Settings = typeof DEFAULTS & ServiceOptions;

const REQUEST_ID = /^[\w.:-]{1,64}$/;

/** What close() takes down, in order. */
interface Parts {
  settings: Settings;
  server: Server;
  drain: Drain;
  sessions: Sessions;
  endpoints: Map<string, McpEndpoint>;
  engines: Engines;
  log: JsonLog;
}

export async function startService(options: ServiceOptions): Promise<Service> {
  const settings = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) } as Settings;
  const log = createJsonLog({ level: options.logLevel ?? 'info', ...(options.writeLog ? { writeLine: options.writeLog } : {}) });
  await checkSharedStore(options.guardStore, log);
  const drain = new Drain(log);
  let sessions: Sessions | undefined;
  const metrics = createServiceMetrics({ inflight: () => drain.inflight, sessionsOpen: () => sessions?.size ?? 0 });
  const fairness = new Fairness({ perKey: settings.upstreamPerKey, unaccepted: settings.upstreamUnaccepted });
  let oauth: OAuth | undefined;
  const onKeyRefused = options.oauth ? { onKeyRefused: (key: string) => oauth?.keyRefused(key) } : {};
  const confirmations = confirmationBudgetOf(options, fairness);
  const chargeSpend = confirmations ? { chargeSpend: (id: string) => confirmations.chargeSpend(id) } : {};
  const engines = startEngines(
    { ...options, ...onKeyRefused, ...chargeSpend, slots: (keyId) => fairness.slotsOf(keyId), isAccepted: (keyId) => fairness.isAccepted(keyId) },
    metrics,
    log,
  );
  const endpoints = mcpEndpoints(options.catalogs, engines.engines, settings.maxBodyBytes, log);
  oauth = options.oauth && startOAuth(options.oauth, settings, engines, fairness, log);
  sessions = new Sessions(
    settings,
    (authInfo) => {
      metrics.refused.inc({ reason: 'session-key' });
      requestLogOf(log, authInfo).warn('a request came on a session opened with another key, or another sign-in of this key; refused');
    },
    (keyId) => fairness.isAccepted(keyId),
  );
  const handle = requestHandler({
    guards: createGuards({
      settings: guardSettings(settings, endpoints),
      drain,
      metrics,
      isAccepted: (keyId) => fairness.isAccepted(keyId),
      ...(oauth ? { oauth } : {}),
    }),
    mcpPaths: new Set(endpoints.keys()),
    drain,
    metrics,
    serveMcp: mcpHandler(endpoints, sessions, settings.maxBodyBytes, log, confirmations, (reason) => metrics.refused.inc({ reason })),
    trustedProxyHops: trustedProxyHopsOf(settings),
    ...(oauth ? { oauth } : {}),
  });
  const server = await listen(settings, handle, log, new Set(endpoints.keys()), () => metrics.refused.inc({ reason: 'too_many_connections' }));
  oauth?.setPublicUrl(urlOf(server));
  drain.markReady();
  const parts: Parts = { settings, server, drain, sessions, endpoints, engines, log };
  let closing: Promise<void> | undefined;
  return { url: urlOf(server), server, metrics, close: () => (closing ??= closeService(parts)) };
}

/** Each key's share of confirmations, when spent ones are kept in this process's bounded memory (not Redis). */
function confirmationBudgetOf(options: ServiceOptions, fairness: Fairness): ConfirmationBudget | undefined {
  if (options.spent !== undefined && !(options.spent instanceof MemorySpentStore)) return undefined;
  return new ConfirmationBudget(options.confirmationBudget ?? CONFIRMATION_BUDGET, (keyId) => fairness.isAccepted(keyId));
}

/**
 * A Redis that evicts keys when it is full would let a write go out twice, with nothing said: the
 * service does not start on one. A clock off Redis's, or a policy that could not be read, is said.
 */
async function checkSharedStore(store: GuardStore | undefined, log: JsonLog): Promise<void> {
  if (!(store instanceof RedisGuardStore)) return;
  const { refuse, warnings } = await store.startupCheck();
  if (refuse) throw new StartupError(refuse);
  for (const warning of warnings) log.warn(warning);
}

/**
 * OAuth's routes and guard; each endpoint offers the API scopes of the operations it serves (after
 * read-only mode and the allow and deny lists: a person is never asked to grant what no call can
 * use); a key is checked
 * with one cheap read, in that key's upstream slots like any call (made-up keys posted on a consent
 * page share the allowance of keys the API has not accepted, and never hold the pool). A key that
 * comes with an access token is one the API accepted (fairness.ts vouch).
 */
function startOAuth(options: OAuthOptions, settings: Settings, engines: Engines, fairness: Fairness, log: JsonLog): OAuth {
  const scopesOf = (served: EngageServer[]) => [
    ...new Set(served.flatMap((engine) => engine.tools.flatMap(({ operations }) => operations.map((op) => op.scope)))),
  ];
  const scopesByPath = new Map([
    ['/mcp', scopesOf(engines.engines)],
    ...settings.catalogs.map((domain, index) => [`/mcp/${domain.name}`, scopesOf([engines.engines[index] as EngageServer])] as const),
  ]);
  const probe = settings.catalogs.flatMap((domain) => domain.operations).find((op) => op.id === 'tenant.list');
  const checkKey = async (apiKey: string) => {
    try {
      await engines.client.request(
        { method: 'GET', path: probe?.path ?? '/api/user/v1/dashboard/tenant/list', safe: true, lookup: true },
        { credentials: { apiKey, slots: fairness.slotsOf(keyFingerprint(apiKey)) } },
      );
      return 'valid' as const;
    } catch (error) {
      const kind = (error as { kind?: string }).kind;
      return kind === 'auth' ? ('invalid' as const) : kind === 'scope' ? ('valid' as const) : ('unknown' as const);
    }
  };
  const allowedHosts = settings.allowedHosts ?? localhostAllowedHostnames();
  return createOAuth(options, { scopesByPath, allowedHosts, checkKey, onAdmitted: (keyId) => fairness.vouch(keyId), log });
}

function trustedProxyHopsOf(settings: Settings): number {
  return settings.trustedProxyHops ?? settings.oauth?.trustedProxyHops ?? 0;
}

function guardSettings(settings: Settings, endpoints: Map<string, McpEndpoint>) {
  return {
    mcpPaths: new Set(endpoints.keys()),
    domainNames: settings.catalogs.map((domain) => domain.name),
    allowedHosts: settings.allowedHosts ?? localhostAllowedHostnames(),
    allowedOrigins: settings.allowedOrigins ?? localhostAllowedOrigins(),
    maxBodyBytes: settings.maxBodyBytes,
    maxConcurrentPerKey: settings.maxConcurrentPerKey,
    maxInFlightUnaccepted: settings.unacceptedInFlight,
    // One address cannot hold it all; behind a proxy not named in trustedProxyHops, every caller is one address.
    maxInFlightUnacceptedPerAddress: settings.unacceptedInFlightPerAddress ?? Math.max(1, Math.ceil(settings.unacceptedInFlight / 4)),
    trustedProxyHops: trustedProxyHopsOf(settings),
    requestTimeoutMs: settings.requestTimeoutMs,
  };
}

/**
 * The HTTP server: each request gets an id (the caller's X-Request-Id if sane) and a log whose lines
 * carry it, handed down with the request. (An AsyncLocalStorage did this before: on Node 20 its
 * promise hooks cost 4% of a call's CPU in remote mode, `npm run bench -- --only http-peer`.)
 */
async function listen(settings: Settings, handle: RequestHandler, log: JsonLog, mcpPaths: ReadonlySet<string>, connectionRefused: () => void): Promise<Server> {
  // Node's requestTimeout bounds the receiving of a request (headers and body), not its answer: it
  // was the answer's deadline plus 5 s, so one body sent a byte at a time held its connection, its
  // buffered body (up to maxBodyBytes) and a place in its key's limit for 12 minutes. The checks run
  // every connectionsCheckingInterval (30 s by default), so a short bound checks more often.
  const requestTimeout = settings.receiveTimeoutMs;
  const timeouts = {
    requestTimeout,
    // Node refuses a headersTimeout above requestTimeout: a short receiving bound shortens both.
    headersTimeout: Math.min(30_000, requestTimeout),
    connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(requestTimeout / 4))),
    keepAliveTimeout: 5_000,
  };
  const cap = new ConnectionCap(settings, log, connectionRefused);
  const server = createHttpServer(timeouts, (req, res) => {
    if (cap.refuse(req.socket, res, PROBE_PATHS.has(pathOf(req.url)))) return;
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) && !holdsCredential(req, given) ? given : randomUUID();
    res.setHeader('x-request-id', requestId);
    const requestLog = log.withFields({ requestId });
    const started = performance.now();
    res.on('close', () => {
      if (!req.url?.startsWith('/mcp')) return;
      const ms = Math.round((performance.now() - started) * 10) / 10;
      // Our endpoints by name, anything else as 'other': a path may hold what a host was told to put
      // there (a key, in some connector settings), and the access log writes fields unredacted.
      const path = pathOf(req.url);
      requestLog.emit('info', 'request', { method: req.method, path: mcpPaths.has(path) ? path : 'other', status: res.statusCode, ms });
    });
    void handle(req, res, { id: requestId, log: requestLog });
  });
  cap.attach(server);
  new StalledAnswers(settings.unreadAnswerMs, log).attach(server);
  server.once('close', () => cap.close());
  // A request Node cannot take (malformed, Transfer-Encoding with Content-Length, headers over 16 KiB,
  // not received within receiveTimeoutMs) gets Node's own answer, 400, 431 or 408, and its connection
  // closed: a listener here would replace that answer (one that only destroyed the socket left the
  // client with a reset and no status).
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  return server;
}

/**
 * Whether a caller's request id shares 8 or more characters (in any letter case) with a credential
 * it sent, or holds a shorter credential whole: the id is written on every line of its request's
 * log, and a client that builds its ids from its key must not put the key there. (The key's
 * encoded forms are not looked for: only a caller set on it would write one, and building the
 * key's redactor for every request that names an id cost 0.18 ms.)
 */
function holdsCredential(req: IncomingMessage, id: string): boolean {
  const lowered = id.toLowerCase();
  const authorization = req.headers.authorization ?? '';
  const secrets = [authorization, authorization.replace(/^\S+\s+/, ''), ...[req.headers['x-api-key'] ?? []].flat()];
  return secrets.some((secret) => {
    const key = secret.trim().toLowerCase();
    if (key.length < 4) return false;
    const window = Math.min(8, key.length);
    for (let at = 0; at + window <= lowered.length; at++) if (key.includes(lowered.slice(at, at + window))) return true;
    return false;
  });
}

function urlOf(server: Server): string {
  const address = server.address() as AddressInfo;
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

/**
 * How long, at the least, the writes ended by the stop (a 429's wait ended, a session closed, a
 * write cut off at the API) have to note their outcome (the journal, the shared mark, the audit
 * record) before Redis is closed: a short drain left a write's mark "still being sent by a
 * replica" on every other replica until its lease ended.
 */
const SETTLE_FLOOR_MS = 2_000;

async function closeService({ settings, server, drain, sessions, endpoints, engines, log }: Parts): Promise<void> {
  await drain.leave(settings.drainDelayMs);
  const drainEnds = Date.now() + settings.drainTimeoutMs;
  const drained = drain.drain(settings.drainTimeoutMs);
  // As a stdio server stopping does: no write is taken now, and one not yet sent (a 429's wait) is not sent and ends at once.
  for (const engine of engines.engines) engine.refuseNewWrites();
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await drained;
  // Writes whose client went away are still at the API: their outcomes are noted before the end.
  await writesSettled(engines, drainEnds - Date.now());
  await sessions.closeAll();
  await Promise.allSettled([...endpoints.values()].map((each) => each.modern.close()));
  server.closeAllConnections();
  await stopped;
  await Promise.allSettled(engines.engines.map((engine) => engine.close()));
  // The calls the close ended, and the writes it cut off at the API, note how they ended before Redis closes.
  await writesSettled(engines, SETTLE_FLOOR_MS);
  // Its timers report to Redis for the life of the process otherwise; the Redis client is the caller's.
  if (settings.guardStore instanceof RedisGuardStore) settings.guardStore.close();
  await engines.client.close();
  await settings.telemetry?.shutdown();
  log.info('stopped');
}

async function writesSettled(engines: Engines, timeoutMs: number): Promise<void> {
  await Promise.all(engines.engines.map((engine) => engine.writesSettled(Math.max(0, timeoutMs))));
}
