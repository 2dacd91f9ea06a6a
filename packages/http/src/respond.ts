// How the service answers outside MCP: its own {error, message} JSON for every refusal, plain text
// for probes. Never cached.
import type { ServerResponse } from 'node:http';

/** A refusal before any MCP message is handled. */
export interface Refusal {
  status: number;
  error: string;
  message: string;
  headers?: Record<string, string>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

export function sendRefusal(res: ServerResponse, refusal: Refusal): void {
  sendJson(res, refusal.status, { error: refusal.error, message: refusal.message }, refusal.headers);
}

export function sendText(res: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/** The refusals of the MCP face, by response: counted once where every answer passes (mcp.ts). */
const refusalReasons = new WeakMap<Response, string>();

/** The same refusal, web-standard, for the MCP face (session routing). */
export function refusalResponse(refusal: Refusal): Response {
  const headers = { 'cache-control': 'no-store', ...refusal.headers };
  const response = Response.json({ error: refusal.error, message: refusal.message }, { status: refusal.status, headers });
  refusalReasons.set(response, refusal.error);
  return response;
}

/** Why refusalResponse made this response (its error), or undefined for any other. */
export function refusalReasonOf(response: Response): string | undefined {
  return refusalReasons.get(response);
}

/**
 * Sends an event stream's head (its status and headers) as soon as it is written. Node holds a
 * response's head until its first body bytes, and the SDK's toNodeHandler (@modelcontextprotocol/node)
 * writes the head and then waits for the stream's first event: a 2025 session's notification stream
 * (GET) said nothing, not even its status, until the SDK's first keep-alive comment 15 s later, and a
 * client or proxy that waits less for a response's headers gave up on it.
 */
export function sendStreamHeadAtOnce(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    (writeHead as (...given: unknown[]) => ServerResponse).apply(this, args);
    const given = args.find((arg): arg is Record<string, unknown> => typeof arg === 'object' && arg !== null && !Array.isArray(arg));
    const type = Object.entries(given ?? {}).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? this.getHeader('content-type');
    if (typeof type === 'string' && /^\s*text\/event-stream\b/i.test(type)) this.flushHeaders();
    return this;
  } as ServerResponse['writeHead'];
}
