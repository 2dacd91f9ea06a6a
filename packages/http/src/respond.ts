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

/** The same refusal, web-standard, for the MCP face (session routing). */
export function refusalResponse(refusal: Refusal): Response {
  const headers = { 'cache-control': 'no-store', ...refusal.headers };
  return Response.json({ error: refusal.error, message: refusal.message }, { status: refusal.status, headers });
}
