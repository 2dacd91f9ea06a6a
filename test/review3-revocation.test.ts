// Review 3: a revoked grant stays revoked. A request whose token was checked just before the
// revocation used to write the grant back (its "last used", at most once a minute), and so did a
// refresh in flight: the revoked grant, and every token of it, came back to life. Over Redis the
// window is a round trip; the store here answers one read late to open it on purpose.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { until } from './helpers.js';
import { mcpStatus, signIn, tokenRequest } from './oauth-helpers.js';
import { SlowReadStore, serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

async function grantOf(store: SlowReadStore): Promise<{ key: string; grant: Record<string, unknown> }> {
  const key = store.keys().find((each) => each.startsWith('grant:')) as string;
  return { key, grant: (await store.get<Record<string, unknown>>(key)) as Record<string, unknown> };
}

const revoke = (issuer: string, token: string, clientId: string) =>
  fetch(`${issuer}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ token, client_id: clientId }) });

describe('revocation', () => {
  it('a request in flight while the grant is revoked does not bring the grant back', async () => {
    const store = new SlowReadStore();
    const service = await serveOAuth(sandbox, logs, { store });
    try {
      const issuer = service.url;
      const tokens = await signIn(issuer, sandbox.keys.full);
      // The grant's "last used" is old, so the next request writes it.
      const { key, grant } = await grantOf(store);
      await store.put(key, { ...grant, lastUsedAt: 0 }, 60_000);
      // The request's read of the grant answers late; the revocation lands in between.
      store.slow = { key, ms: 300 };
      const inFlight = mcpStatus(`${issuer}/mcp`, `Bearer ${tokens.access}`);
      await until('the request reading the grant', () => store.slow === undefined);
      expect((await revoke(issuer, tokens.refresh, tokens.clientId)).status).toBe(200);
      await inFlight;
      expect(await store.get(key)).toBeUndefined();
      expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${tokens.access}`)).status).toBe(401);
    } finally {
      await service.close();
    }
  });

  it('a refresh in flight while the grant is revoked gives no working tokens and does not bring the grant back', async () => {
    const store = new SlowReadStore();
    const service = await serveOAuth(sandbox, logs, { store });
    try {
      const issuer = service.url;
      const tokens = await signIn(issuer, sandbox.keys.full);
      const { key } = await grantOf(store);
      store.slow = { key, ms: 300 };
      const refreshing = tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
      await until('the refresh reading the grant', () => store.slow === undefined);
      expect((await revoke(issuer, tokens.access, tokens.clientId)).status).toBe(200);
      const refreshed = await refreshing;
      expect(await store.get(key)).toBeUndefined();
      if (refreshed.status === 200) expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${refreshed.body.access_token as string}`)).status).toBe(401);
      else expect(refreshed.body.error).toBe('invalid_grant');
      expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${tokens.access}`)).status).toBe(401);
    } finally {
      await service.close();
    }
  });
});

describe('refresh for another resource', () => {
  it('is refused without spending the refresh token: the grant goes on', async () => {
    const service = await serveOAuth(sandbox, logs);
    try {
      const issuer = service.url;
      const tokens = await signIn(issuer, sandbox.keys.full, { resource: `${issuer}/mcp` });
      const other = await tokenRequest(issuer, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh,
        client_id: tokens.clientId,
        resource: `${issuer}/mcp/contact`,
      });
      expect(other).toMatchObject({ status: 400, body: { error: 'invalid_target' } });
      const same = await tokenRequest(issuer, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh,
        client_id: tokens.clientId,
        resource: `${issuer}/mcp`,
      });
      expect(same.status, JSON.stringify(same.body)).toBe(200);
      expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${same.body.access_token as string}`)).status).not.toBe(401);
    } finally {
      await service.close();
    }
  });
});
