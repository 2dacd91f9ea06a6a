// Review 35 (tenants): OAuth without Redis keeps every grant, token and client registration of every
// tenant in one in-process store of at most 200,000 records, the oldest dropped first to make room.
// A record that expired stayed until someone looked it up again, and most never are: each refresh
// leaves a claim on its spent token (2 minutes), each sign-in or refresh a counter. So one tenant
// refreshing in a loop (or a busy service in time) filled the store with dead records, and then every
// new one pushed out the oldest live one: another tenant's client registration, grant and tokens,
// whose connection stopped working (401) and could not be refreshed. Expired records now go first.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { mcpStatus, signIn, tokenRequest } from './oauth-helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const store = new MemoryOAuthStore();
const file = servicePerFile({ oauth: { kek: randomBytes(32), store } });

describe("one tenant's spent refresh tokens, in the in-process OAuth store", () => {
  it("do not push out another tenant's live grant: its token still works and refreshes", { timeout: 60_000 }, async () => {
    const tenantB = await signIn(file.service.url, file.sandbox.keys.otherTenant);
    const tenantA = await signIn(file.service.url, file.sandbox.keys.full);
    // Tenant A refreshes: each refresh leaves a claim on the token it spent, which nothing looks up again.
    const refreshed = await tokenRequest(file.service.url, { grant_type: 'refresh_token', refresh_token: tenantA.refresh, client_id: tenantA.clientId });
    expect(refreshed.status).toBe(200);
    // The rest of A's loop, at the store: 200,000 such claims, expired by the time the next record comes.
    for (let at = 0; at < 200_000; at++) await store.claimOnce(`rtused:a-${at}`, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await tokenRequest(file.service.url, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token as string,
      client_id: tenantA.clientId,
    });
    expect(again.status).toBe(200);
    expect((await mcpStatus(`${file.service.url}/mcp`, `Bearer ${tenantB.access}`)).status).not.toBe(401);
    const bRefreshed = await tokenRequest(file.service.url, { grant_type: 'refresh_token', refresh_token: tenantB.refresh, client_id: tenantB.clientId });
    expect(bRefreshed.status, JSON.stringify(bRefreshed.body)).toBe(200);
  });
});
