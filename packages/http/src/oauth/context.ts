// What every OAuth route shares: the store, grants and clients, the issuer, our resources and
// their scopes, and the one cheap read that tells whether a tenant key is valid.
import type { IncomingMessage } from 'node:http';
import type { Logger } from '@engage-mcp/shared';
import { withoutTrailingSlashes } from '../exchange.js';
import type { Clients } from './clients.js';
import type { Grants } from './grants.js';
import type { OAuthStore } from './store.js';

/** What one read with the key said: valid (200 or 403: a key lacking a read scope is fine), invalid (401), or not known now. */
export type KeyCheck = 'valid' | 'invalid' | 'unknown';

export interface OAuthContext {
  store: OAuthStore;
  grants: Grants;
  clients: Clients;
  /** The public origin, which is also the issuer (no trailing slash). */
  issuer(): string;
  /** Our resources (public URL of /mcp and each /mcp/<domain>) → the API scopes their operations use. */
  scopesOf(resource: string): string[] | undefined;
  checkKey(tenantKey: string): Promise<KeyCheck>;
  /** Who is asking, for the limits on routes anyone may call (requester.ts). */
  requester(req: Pick<IncomingMessage, 'headers' | 'socket'>): string;
  /** Consent requests travel sealed in their page's form, never stored (the page is free to open). */
  consent: { seal(record: object): string; open<T>(sealed: string): T | undefined };
  log: Logger;
}

/** Resource indicators compared without a trailing slash or fragment (RFC 8707). */
export function normalResource(value: string): string {
  try {
    const url = new URL(value);
    url.hash = '';
    return withoutTrailingSlashes(url.href);
  } catch {
    return value;
  }
}
