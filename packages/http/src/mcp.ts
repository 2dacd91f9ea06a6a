// The MCP face: `/mcp/<domain>` serves one domain's tools, `/mcp` all of them. 2026-07-28 requests
// go to the SDK's own stateless entry (createMcpHandler); 2025-era ones to their session.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler, isLegacyRequest, type AuthInfo, type McpHttpHandler } from '@modelcontextprotocol/server';
import { registerViews, SERVER_VERSION, type Domain, type EngageServer, type Logger } from '@engage-mcp/shared';
import { pathOf } from './exchange.js';
import type { ConfirmationBudget } from './confirmation-budget.js';
import { refusalReasonOf, refusalResponse } from './respond.js';
import type { Sessions } from './sessions.js';
import { requestLogOf, type JsonLog } from './log.js';

const MODERN_REVISION = '2026-07-28';

export interface McpEndpoint {
  name: string;
  factory: (era: 'legacy' | 'modern', authInfo?: AuthInfo) => McpServer;
  modern: McpHttpHandler;
}

export function mcpEndpoints(catalogs: Domain[], engines: EngageServer[], maxBodyBytes: number, log: Logger): Map<string, McpEndpoint> {
  const endpoints = new Map<string, McpEndpoint>();
  const add = (name: string, factory: McpEndpoint['factory']) => {
    const onerror = (error: Error) => log.debug(`modern: ${error.message}`);
    const modern = createMcpHandler(({ era, authInfo }) => factory(era, authInfo), { legacy: 'reject', maxRequestBodySize: maxBodyBytes, onerror });
    endpoints.set(name, { name, factory, modern });
  };
  catalogs.forEach((domain, index) => {
    add(`/mcp/${domain.name}`, (era, authInfo) => (engines[index] as EngageServer).createMcpServer({ era, ...(authInfo ? { authInfo } : {}) }));
  });
  const intro = 'engage-mcp: all seven domains of the Tenant Messaging and Engagement API in one server.';
  add('/mcp', (era, authInfo) => {
    const parts = engines.map((engine) => engine.instructionsFor(authInfo));
    // A domain whose every operation the settings leave out is no sign-in's doing: it is said apart.
    const served = (index: number) => (engines[index] as EngageServer).tools.length > 0;
    const unlisted = catalogs.filter((_, index) => parts[index] === undefined && served(index)).map((domain) => domain.name);
    const leftOut = catalogs.filter((_, index) => !served(index)).map((domain) => domain.name);
    const instructions = [
      intro,
      ...parts.filter((part) => part !== undefined),
      ...(unlisted.length > 0 ? [notGrantedDomains(unlisted)] : []),
      ...(leftOut.length > 0 ? [notServedDomains(leftOut)] : []),
    ].join('\n\n');
    const mcp = new McpServer(
      { name: 'engage-mcp', title: 'engage-mcp: all domains', version: SERVER_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions },
    );
    registerViews(
      mcp,
      engines.flatMap((engine) => engine.registerTools(mcp, { era, together: true, ...(authInfo ? { authInfo } : {}) })),
    );
    return mcp;
  });
  return endpoints;
}

/** The domains an OAuth grant holds no scope of: one line for them all, rather than each domain's instructions. */
const notGrantedDomains = (domains: string[]) =>
  `Not listed: the ${domains.join(', ')} domain${domains.length > 1 ? 's' : ''}, none of whose API scopes this connection's sign-in granted (the user can reconnect this server and tick them).`;

/** The domains the service's settings leave without any operation: the operator's choice, for every connection. */
const notServedDomains = (domains: string[]) =>
  `Not served: the ${domains.join(', ')} domain${domains.length > 1 ? 's' : ''}, every operation of which this service's settings leave out (read-only mode, or the operations allow and deny lists): if the user needs ${domains.length > 1 ? 'them' : 'it'}, they ask the service's operator.`;

// The 2026-07-28 entry refuses batches, and 2025-06-18 dropped them. One POST is one call, so the
// key's concurrency limit, the deadline and the drain each count every call.
const BATCH_REFUSED = {
  status: 400,
  error: 'batch_refused',
  message: 'A JSON-RPC batch of several requests is not served: send one request per POST (one tools/call each).',
};

/**
 * A 2026-07-28 POST's body, read once and handed to the SDK parsed: else the SDK copies the request
 * (a web stream tee) to read it. A body that is not JSON goes on as it came, for the SDK to answer.
 */
async function readOnce(request: Request, authInfo: AuthInfo): Promise<[Request, { authInfo: AuthInfo; parsedBody?: unknown }]> {
  if (request.method !== 'POST') return [request, { authInfo }];
  const text = await request.text();
  try {
    if (text !== '') return [request, { authInfo, parsedBody: JSON.parse(text) as unknown }];
  } catch {
    // not JSON: the SDK's own answer (a parse error)
  }
  return [new Request(request.url, { method: request.method, headers: request.headers, body: text, signal: request.signal }), { authInfo }];
}

/** A POST's body, parsed from a copy (the request stays readable), or undefined when it is not JSON. */
async function bodyOf(request: Request): Promise<unknown> {
  if (request.method !== 'POST') return undefined;
  try {
    return JSON.parse(await request.clone().text()) as unknown;
  } catch {
    return undefined;
  }
}

/** How many JSON-RPC requests (not notifications or responses) a body holds. */
function requestsIn(body: unknown): number {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter((message) => typeof message === 'object' && message !== null && 'method' in message && 'id' in message).length;
}

export type NodeMcpHandler = (req: IncomingMessage & { auth?: AuthInfo }, res: ServerResponse) => Promise<void>;

/**
 * The MCP face as a Node handler; the request's authInfo (its key) was set by the guards.
 * `confirmations`: the share of confirmations each key may spend (confirmation-budget.ts), when spent ones are kept in this process:
 * a request bringing one is refused here when its key's share is used, and notes which key brought it.
 * `counted`: told each refusal made here or by the sessions, by its error (engage_http_refused_total).
 */
export function mcpHandler(
  endpoints: Map<string, McpEndpoint>,
  sessions: Sessions,
  maxBodyBytes: number,
  log: JsonLog,
  confirmations?: ConfirmationBudget,
  counted?: (reason: string) => void,
): NodeMcpHandler {
  async function serve(request: Request, requestOptions?: { authInfo?: AuthInfo }): Promise<Response> {
    const authInfo = requestOptions?.authInfo as AuthInfo;
    const target = endpoints.get(pathOf(new URL(request.url).pathname)) as McpEndpoint;
    // A request that names the 2026-07-28 revision in its header is never legacy (the SDK's own rule):
    // it goes straight to the modern entry, without reading its body twice.
    if (request.headers.get('mcp-protocol-version') === MODERN_REVISION) {
      const [read, options] = await readOnce(request, authInfo);
      return confirmations?.refusal(authInfo, options.parsedBody) ?? target.modern.fetch(read, options);
    }
    const body = await bodyOf(request);
    const overBudget = confirmations?.refusal(authInfo, body);
    if (overBudget) return overBudget;
    // A request in a 2025 session (its id in the header; 2026-07-28 has no sessions) stays in its session
    // whatever its body: a host's unreadable answer to our question must reach the session's server, which
    // then stops waiting for it (mcp/ask.ts), instead of being refused by the modern entry.
    const inSession = request.headers.has('mcp-session-id');
    if (!inSession && !(await isLegacyRequest(request, body, { maxRequestBodySize: maxBodyBytes }))) return target.modern.fetch(request, { authInfo });
    if (requestsIn(body) > 1) {
      requestLogOf(log, authInfo).info('refused a JSON-RPC batch of several requests');
      return refusalResponse(BATCH_REFUSED);
    }
    return sessions.serve(request, target, authInfo, body);
  }
  const fetch = async (request: Request, requestOptions?: { authInfo?: AuthInfo }) => {
    const response = await serve(request, requestOptions);
    const refused = refusalReasonOf(response);
    // A session's other key is counted where it is logged (service.ts: session-key).
    if (refused !== undefined && refused !== 'session_key') counted?.(refused);
    return endsWithClient(request, withoutKeepAlive(response));
  };
  return toNodeHandler({ fetch }, { maxRequestBodySize: maxBodyBytes, onerror: (error) => log.warn(`request: ${error.message}`) });
}

/**
 * The SDK's SSE answers say `Connection: keep-alive`, and toNodeHandler hands every header to Node,
 * which then neither says close to a client that sent `Connection: close` nor closes its socket
 * (it waited for keepAliveTimeout). Connection is hop-by-hop, Node's to decide: it is dropped here
 * (a `close`, as the SDK's 413 sends, stays).
 */
function withoutKeepAlive(response: Response): Response {
  if (!/^\s*keep-alive\s*$/i.test(response.headers.get('connection') ?? '')) return response;
  const headers = new Headers(response.headers);
  headers.delete('connection');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * A 2025 session's notification stream (GET) is let go as soon as its client goes away. toNodeHandler
 * notices a closed response only when it next has something to write (the SDK's keep-alive, 15 s on),
 * and until then the session's one stream stayed taken: a client reopening it was answered 409, and
 * the SDK's client, which retries twice within 2.5 s, gave the stream up. The request's signal (aborted
 * by toNodeHandler when the response closes) now cancels the SDK's stream, which frees its place.
 */
function endsWithClient(request: Request, response: Response): Response {
  if (request.method !== 'GET' || response.body === null) return response;
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  response.body.pipeTo(writable, { signal: request.signal }).catch(() => undefined);
  return new Response(readable, { status: response.status, statusText: response.statusText, headers: response.headers });
}
