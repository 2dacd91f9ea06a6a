// One request on its way to MCP, and what a guard is: the types the guards, the OAuth guard and the
// handler share (apart, so that neither the guards nor OAuth import the other for them).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Logger } from '@engage-mcp/shared';
import type { Refusal } from './respond.js';

/** A request's path without its query or trailing slashes (`/mcp/contact/?x` → `/mcp/contact`): how every part names a route. */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  return withoutTrailingSlashes(query < 0 ? raw : raw.slice(0, query)) || '/';
}

/**
 * `text` without the slashes it ends with, in one pass from its end. Not `/\/+$/`: tried from
 * every slash of a run that something else ends, it read the run again each time, and a URL of
 * 16,000 slashes and a letter (what fits in Node's 16 KiB of headers) cost 80 ms on every request,
 * before any key was asked for.
 */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}

/** One request on its way through the guards; the key guard adds its key. */
export interface Exchange {
  req: IncomingMessage & { auth?: AuthInfo };
  res: ServerResponse;
  /** The path without query or trailing slashes. */
  path: string;
  /** An MCP endpoint (else /metrics, the only other route past the route guard). */
  mcp: boolean;
  key?: string;
  keyId?: string;
  /** Set by the OAuth guard for an access token: the grant's key, scopes and audience (else the handler builds it from the key). */
  auth?: AuthInfo;
  /** The request's log: its lines carry the request's id. */
  log: Logger;
}

export interface Guard {
  name: string;
  /** Only for MCP endpoints (/metrics passes only the route and Host/Origin guards). */
  mcpOnly: boolean;
  check(exchange: Exchange): Refusal | undefined | Promise<Refusal | undefined>;
}
