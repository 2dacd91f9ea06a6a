// What a request must pass before MCP sees it, in order: a known route, our Host and Origin, a key,
// a replica not draining, a body within the limit, room under the key's concurrency limit, and a
// deadline. Each guard returns a refusal or nothing; a new concern (OAuth, telemetry) is one more.
import type { IncomingMessage } from 'node:http';
import { validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { isPrintableAsciiKey, isUnfilledKey, keyFingerprint } from '@engage-mcp/shared';
import type { Drain } from './drain.js';
import type { Exchange, Guard } from './exchange.js';
import type { ServiceMetrics } from './metrics.js';
import { TOKEN_PREFIX, type OAuth } from './oauth/index.js';
import { requesterOf } from './oauth/requester.js';
import { sendJson, type Refusal } from './respond.js';

export interface GuardSettings {
  mcpPaths: ReadonlySet<string>;
  domainNames: string[];
  allowedHosts: string[];
  allowedOrigins: string[];
  maxBodyBytes: number;
  maxConcurrentPerKey: number;
  /** Calls in flight of all keys the API has not accepted yet, together (their upstream share is 2 slots). */
  maxInFlightUnaccepted: number;
  /** Of those, the most one client address may hold (requesterOf: an IPv6 /64 counts as one). */
  maxInFlightUnacceptedPerAddress: number;
  /** Proxies in front whose X-Forwarded-For names the client (requesterOf); 0: the TCP peer is the client. */
  trustedProxyHops: number;
  requestTimeoutMs: number;
}

export interface GuardDeps {
  settings: GuardSettings;
  drain: Drain;
  metrics: ServiceMetrics;
  /** OAuth, when ENGAGE_OAUTH_KEK is set. */
  oauth?: OAuth;
  /** Has the API accepted this key (fairness.ts)? Without it, every key counts as accepted. */
  isAccepted?: (keyId: string) => boolean;
}

/** The 401 for a key that is a placeholder or an unexpanded reference; the value is never quoted. */
const UNFILLED_KEY =
  "The API key sent is a placeholder or a reference to a variable (<…>, ${…} or $NAME) that the client did not fill in: put the tenant API key itself in the connector's settings (Authorization: Bearer <key> or X-API-Key), or set that variable where the client runs. Nothing was sent to the API.";
const NO_KEY_CHALLENGE =
  'Bearer realm="engage-mcp", error="invalid_request", error_description="send the tenant API key as Authorization: Bearer <key> or X-API-Key"';

export function createGuards(deps: GuardDeps): Guard[] {
  return [
    { name: 'route', mcpOnly: false, check: routeGuard(deps) },
    { name: 'host', mcpOnly: false, check: hostGuard(deps) },
    { name: 'origin', mcpOnly: false, check: originGuard(deps) },
    ...(deps.oauth ? [{ name: 'oauth', mcpOnly: true, check: deps.oauth.guard }] : []),
    { name: 'key', mcpOnly: true, check: keyGuard(deps) },
    { name: 'draining', mcpOnly: true, check: drainingGuard(deps) },
    { name: 'body-size', mcpOnly: true, check: bodySizeGuard(deps) },
    { name: 'per-key-limit', mcpOnly: true, check: perKeyLimitGuard(deps) },
    { name: 'deadline', mcpOnly: true, check: deadlineGuard(deps) },
  ];
}

/** A refusal counted by reason in engage_http_refused_total and logged. */
function refused({ metrics }: GuardDeps, { log }: Exchange, reason: string, refusal: Refusal): Refusal {
  metrics.refused.inc({ reason });
  log.info(`refused (${reason}): ${refusal.message}`);
  return refusal;
}

function routeGuard({ settings }: GuardDeps): Guard['check'] {
  const message = `No such endpoint. MCP is served at /mcp and /mcp/<domain> (${settings.domainNames.join(', ')}).`;
  return ({ path }) => (settings.mcpPaths.has(path) || path === '/metrics' ? undefined : { status: 404, error: 'not_found', message });
}

/**
 * A Host that is a host name or address and a port, nothing more. The SDK's Node adapter builds a
 * request's URL as `http://<Host><path>`, and the MCP face picks the endpoint from that URL: a Host
 * with a path, a query, a fragment or credentials would move the request to another endpoint than
 * the one the route, OAuth audience and key checks were made for (or make it a 500).
 */
const PLAIN_HOST = /^(?:\[[\da-f:.]+\]|[\w.-]+)(?::\d{1,5})?$/i;

// DNS rebinding: the Host must be one of ours, and a browser's Origin one we allow (metrics too).
function hostGuard(deps: GuardDeps): Guard['check'] {
  return (exchange) => {
    const given = exchange.req.headers.host;
    const host = given === undefined || PLAIN_HOST.test(given) ? validateHostHeader(given, deps.settings.allowedHosts) : undefined;
    if (host?.ok) return undefined;
    return refused(deps, exchange, 'host', {
      status: 403,
      error: 'forbidden_host',
      message: `${host?.message ?? 'Invalid Host header: it must be a host name and port only'}. Allowed hosts are set with ENGAGE_ALLOWED_HOSTS.`,
    });
  };
}

function originGuard(deps: GuardDeps): Guard['check'] {
  return (exchange) => {
    const origin = validateOriginHeader(exchange.req.headers.origin, deps.settings.allowedOrigins);
    if (origin.ok) return undefined;
    const message = `${origin.message}. Allowed origins are set with ENGAGE_ALLOWED_ORIGINS.`;
    return refused(deps, exchange, 'origin', { status: 403, error: 'forbidden_origin', message });
  };
}

function keyGuard({ metrics, oauth }: GuardDeps): Guard['check'] {
  return (exchange) => {
    if (exchange.auth) return undefined; // an OAuth access token, admitted by the OAuth guard
    const key = keyOf(exchange.req);
    // One of our OAuth tokens in X-API-Key is no tenant key: it is never sent on to the API.
    if (oauth && key?.startsWith(TOKEN_PREFIX)) {
      metrics.refused.inc({ reason: 'no-key' });
      return oauth.challenge(exchange, false);
    }
    // A connector's `Bearer ${ENGAGE_API_KEY}` left unexpanded is no key: sent on, the API would
    // refuse it and the person be told to make a new key, when the fix is the connector's settings.
    if (key !== undefined && isUnfilledKey(key)) {
      metrics.refused.inc({ reason: 'no-key' });
      if (oauth) return oauth.challenge(exchange, false);
      return { status: 401, error: 'unauthorized', message: UNFILLED_KEY, headers: { 'www-authenticate': NO_KEY_CHALLENGE } };
    }
    if (key !== undefined && oauth?.keyMode !== false) {
      exchange.key = key;
      exchange.keyId = keyFingerprint(key);
      return undefined;
    }
    metrics.refused.inc({ reason: 'no-key' });
    if (oauth) return oauth.challenge(exchange, key !== undefined);
    const message = 'No API key: send the tenant API key as Authorization: Bearer <key> or X-API-Key: <key>.';
    return { status: 401, error: 'unauthorized', message, headers: { 'www-authenticate': NO_KEY_CHALLENGE } };
  };
}

function drainingGuard(deps: GuardDeps): Guard['check'] {
  return (exchange) => {
    if (!deps.drain.draining) return undefined;
    const headers = { connection: 'close', 'retry-after': '1' };
    return refused(deps, exchange, 'draining', { status: 503, error: 'shutting_down', message: 'This replica is shutting down; retry.', headers });
  };
}

function bodySizeGuard(deps: GuardDeps): Guard['check'] {
  const limit = deps.settings.maxBodyBytes;
  return (exchange) => {
    if (Number(exchange.req.headers['content-length'] ?? 0) <= limit) return undefined;
    const message = `The request body is larger than ${limit} bytes.`;
    return refused(deps, exchange, 'body', { status: 413, error: 'body_too_large', message, headers: { connection: 'close' } });
  };
}

/**
 * Calls (POSTs) count against the key's limit; long-lived 2025 notification streams (GET) and
 * session ends (DELETE) do not. Calls of keys the API has not accepted yet (new or made-up: any
 * string passes as a key until the API answers 401) also count against one bound for all such keys
 * (unacceptedBound).
 */
function perKeyLimitGuard(deps: GuardDeps): Guard['check'] {
  const { settings, metrics } = deps;
  const perKey = new Map<string, number>();
  const limit = settings.maxConcurrentPerKey;
  const unaccepted = unacceptedBound(deps);
  return (exchange) => {
    const { req, res, keyId } = exchange;
    if (req.method !== 'POST' || keyId === undefined) return undefined;
    const current = perKey.get(keyId) ?? 0;
    if (current >= limit) {
      metrics.throttled.inc();
      const message = `More than ${limit} calls in flight with this key; retry after a call finishes.`;
      return { status: 429, error: 'too_many_requests', message, headers: { 'retry-after': '1' } };
    }
    if (deps.isAccepted?.(keyId) === false) {
      const refusal = unaccepted(exchange);
      if (refusal) return refusal;
    }
    perKey.set(keyId, current + 1);
    res.once('close', () => {
      const left = (perKey.get(keyId) ?? 1) - 1;
      if (left > 0) perKey.set(keyId, left);
      else perKey.delete(keyId);
    });
    return undefined;
  };
}

/**
 * Calls of keys not yet accepted share 2 upstream slots, so more in flight only wait, each holding
 * its request: without a bound anyone could hold the service's memory without a key. One address
 * holds at most a share of the bound: else one client's made-up keys (bodies that trickle in hold
 * their place up to the receive bound) refused the first call of every tenant this replica had not
 * yet seen accepted, every tenant right after a deploy, for as long as it went on. Counts the call
 * (until its response closes) and returns undefined, or returns the refusal.
 */
function unacceptedBound(deps: GuardDeps): (exchange: Exchange) => Refusal | undefined {
  const { maxInFlightUnaccepted: bound, maxInFlightUnacceptedPerAddress: share, trustedProxyHops } = deps.settings;
  const ofAddress = new Map<string, number>();
  let total = 0;
  const busy = (whose: string) => ({
    status: 503,
    error: 'unaccepted_keys_busy',
    message: `${whose} are in flight; retry in a moment. A key's calls are not held back by this once the API has answered one of them.`,
    headers: { 'retry-after': '1' },
  });
  return (exchange) => {
    const address = requesterOf(exchange.req, trustedProxyHops);
    const held = ofAddress.get(address) ?? 0;
    if (total >= bound)
      return refused(deps, exchange, 'unaccepted_busy', busy(`More than ${bound} calls of keys this service has not yet seen the API accept`));
    if (held >= share)
      return refused(
        deps,
        exchange,
        'unaccepted_busy',
        busy(`More than ${share} calls from this address with keys this service has not yet seen the API accept`),
      );
    total++;
    ofAddress.set(address, held + 1);
    exchange.res.once('close', () => {
      total--;
      const left = (ofAddress.get(address) ?? 1) - 1;
      if (left > 0) ofAddress.set(address, left);
      else ofAddress.delete(address);
    });
    return undefined;
  };
}

/**
 * A call not answered within requestTimeoutMs is answered 504. A read is stopped then; a write
 * that was sent is not (never twice: it runs to its answer), so the 504 must not say "cancelled".
 */
function deadlineGuard({ settings, metrics }: GuardDeps): Guard['check'] {
  const ms = settings.requestTimeoutMs;
  const message =
    `No answer within ${ms} ms. A read was stopped; a write that was already sent is not stopped and may still be carried out: ` +
    'check its result with a read before repeating it.';
  return ({ req, res, log }) => {
    if (req.method !== 'POST') return undefined;
    const deadline = setTimeout(() => {
      metrics.refused.inc({ reason: 'deadline' });
      log.warn(`request deadline of ${ms} ms passed; answering 504`);
      if (!res.headersSent) sendJson(res, 504, { error: 'deadline', message });
      else res.destroy();
    }, ms);
    res.once('close', () => clearTimeout(deadline));
    return undefined;
  };
}

/** The tenant's key: Authorization: Bearer …, else X-API-Key. A value with anything but printable ASCII is no key (isPrintableAsciiKey). */
export function keyOf(req: IncomingMessage): string | undefined {
  const authorization = req.headers.authorization;
  const bearer = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  const header = req.headers['x-api-key'];
  const key = bearer ?? (typeof header === 'string' ? header.trim() : undefined);
  return key && isPrintableAsciiKey(key) && key.length <= 1024 ? key : undefined;
}
