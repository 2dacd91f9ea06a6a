// The request handler: count and time every request, answer the probes, run the guards in order,
// then serve /metrics or hand the request, with its key as authInfo, to the MCP face.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Logger } from '@engage-mcp/shared';
import type { Drain } from './drain.js';
import { pathOf, type Exchange, type Guard } from './exchange.js';
import type { NodeMcpHandler } from './mcp.js';
import type { ServiceMetrics } from './metrics.js';
import { requesterOf } from './oauth/requester.js';
import { OWN_PATHS, PROBE_PATHS, answerMetrics, answerProbe } from './endpoints.js';
import { sendJson, sendRefusal, sendStreamHeadAtOnce, type Refusal } from './respond.js';

export interface HandlerDeps {
  guards: Guard[];
  mcpPaths: ReadonlySet<string>;
  drain: Drain;
  metrics: ServiceMetrics;
  serveMcp: NodeMcpHandler;
  /** Proxies in front whose X-Forwarded-For names the client (requesterOf), for the limits by client address. */
  trustedProxyHops?: number;
  /** OAuth's own routes (discovery, consent, token…), when it is on. */
  oauth?: { owns(path: string): boolean; serve(req: IncomingMessage, res: ServerResponse, path: string, log: Logger): Promise<void> };
}

/** A request's id (X-Request-Id) and its log, whose lines carry the id. */
export interface RequestScope {
  id: string;
  log: Logger;
}

export type RequestHandler = (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse, scope: RequestScope) => Promise<void>;

export function requestHandler(deps: HandlerDeps): RequestHandler {
  return async (req, res, { id, log }) => {
    const path = pathOf(req.url);
    countRequest(res, deps.metrics, deps.mcpPaths.has(path) || OWN_PATHS.has(path) ? path : 'other');
    if (PROBE_PATHS.has(path)) return answerProbe(path, req, res, deps.drain);
    if (deps.oauth?.owns(path)) return deps.oauth.serve(req, res, path, log);
    const exchange: Exchange = { req, res, path, mcp: deps.mcpPaths.has(path), log };
    const refusal = await firstRefusal(deps.guards, exchange);
    if (refusal) return sendRefusal(res, refusal);
    try {
      if (!exchange.mcp) return await answerMetrics(req, res, deps.metrics);
      // Calls (POSTs) are what a drain waits for; a 2025 session's notification stream (GET) is closed with its session.
      deps.drain.track(res, req.method === 'POST');
      // The key is handed to the SDK as this request's authInfo, and from there to this request's calls
      // only; with it the request's id, so the calls' log lines carry it too, and the TCP peer the
      // request came from as Node sees it (never X-Forwarded-For, the caller's to write), for the calls' spans.
      const auth = exchange.auth ?? { token: exchange.key as string, clientId: exchange.keyId as string, scopes: [] };
      const unanswered = closedUnanswered(res);
      const extra = {
        ...auth.extra,
        requestId: id,
        peer: { address: req.socket.remoteAddress, port: req.socket.remotePort },
        // The client's address group, behind trusted proxies too: what the sessions of keys not yet accepted are shared by.
        requester: requesterOf(req, deps.trustedProxyHops ?? 0),
        closedUnanswered: unanswered.signal,
      };
      req.auth = { ...auth, extra };
      // A notification stream's head goes out at once, not with its first event (respond.ts). A call's
      // (POST) answer keeps Node's way: its head waits for the answer, so a deadline can still say 504.
      if (req.method === 'GET') sendStreamHeadAtOnce(res);
      await deps.serveMcp(req, res);
      unanswered.answered();
    } catch (error) {
      log.error(`unhandled: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: 'Internal error.' });
      else res.destroy();
    }
  };
}

/**
 * Aborted when the request's connection closes before its answer was written whole (the client went
 * away, or the deadline answered 504 in its place). A 2025 session's call runs on in its session,
 * which no closed POST stops, and the service keeps no event store: its answer could never be
 * resumed, so the call ends with its POST, as a client's cancel ends it (register.ts reads it).
 */
function closedUnanswered(res: ServerResponse): { signal: AbortSignal; answered(): void } {
  const closed = new AbortController();
  let answered = false;
  res.once('close', () => {
    if (!answered) closed.abort();
  });
  return {
    signal: closed.signal,
    answered: () => {
      answered = true;
    },
  };
}

async function firstRefusal(guards: Guard[], exchange: Exchange): Promise<Refusal | undefined> {
  for (const guard of guards) {
    if (guard.mcpOnly && !exchange.mcp) continue;
    // Only the OAuth guard may wait (its store); the others answer at once.
    const checked = guard.check(exchange);
    const refusal = checked instanceof Promise ? await checked : checked;
    if (refusal) return refusal;
  }
  return undefined;
}

/** Requests by endpoint (a fixed list, else "other") and status, with their latency. */
function countRequest(res: ServerResponse, metrics: ServiceMetrics, endpoint: string): void {
  const started = performance.now();
  res.once('close', () => {
    metrics.requests.inc({ endpoint, status: String(res.statusCode) });
    metrics.latency.observe({ endpoint }, (performance.now() - started) / 1000);
  });
}
