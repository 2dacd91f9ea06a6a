// Review 36 (remote): OAuth without Redis keeps every tenant's grants, tokens and client
// registrations in one in-process store (200,000 records). Review35 made a full store drop expired
// records first, then the oldest live one. Registering a client costs nothing but an address (20 an
// hour each; an IPv6 /64 counts as one, and a /48 holds 65,536), and a registration lives 30 days:
// anyone with enough addresses filled the store with them, after which each new record pushed out
// the oldest live one, a tenant's own registration, whose refresh then failed (invalid_client) and
// whose person had to sign in again. A registration no sign-in has used now goes first. Shown with a
// store of 300 records behind a proxy the service trusts (ENGAGE_TRUSTED_PROXY_HOPS=1).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { mcpStatus, REDIRECT, signIn, tokenRequest } from './oauth-helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const store = new MemoryOAuthStore(300);
const file = servicePerFile({ oauth: { kek: randomBytes(32), store, trustedProxyHops: 1 } });

/** One registration from an address of 2001:db8::/32, 20 from each /48 (review44 limits a /48 to 200 an hour), as the proxy says. */
async function registerFrom(at: number): Promise<number> {
  const response = await fetch(`${file.service.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `2001:db8:${(Math.floor(at / 20) + 1).toString(16)}::1` },
    body: JSON.stringify({ client_name: 'Filler', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('client registrations from many addresses, in the in-process OAuth store', () => {
  it("do not push out a tenant's registration: its token still works and refreshes", { timeout: 60_000 }, async () => {
    const tenant = await signIn(file.service.url, file.sandbox.keys.otherTenant);
    const statuses = new Set<number>();
    for (let at = 0; at < 400; at++) statuses.add(await registerFrom(at));
    expect([...statuses]).toEqual([201]);
    expect((await mcpStatus(`${file.service.url}/mcp`, `Bearer ${tenant.access}`)).status).not.toBe(401);
    const refreshed = await tokenRequest(file.service.url, { grant_type: 'refresh_token', refresh_token: tenant.refresh, client_id: tenant.clientId });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    // A person signing in meanwhile, with a client registered among the others, is not refused.
    const newcomer = await signIn(file.service.url, file.sandbox.keys.full);
    expect((await mcpStatus(`${file.service.url}/mcp`, `Bearer ${newcomer.access}`)).status).not.toBe(401);
  });
});
