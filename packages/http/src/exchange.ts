// One request on its way to MCP, and what a guard is: the types the guards, the OAuth guard and the
// handler share (apart, so that neither the guards nor OAuth import the other for them).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { Logger } from '@engage-mcp/shared';
import type { Refusal } from './respond.js';

/** A request's path without its query or trailing slashes (`/mcp/contact/?x` → `/mcp/contact`): how every part names a route. */
export function pathOf(url: string | undefined): string {
  return (url ?? '/').split('?')[0]?.replace(/\/+$/, '') || '/';
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
