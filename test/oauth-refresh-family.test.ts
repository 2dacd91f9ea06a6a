// A grant's refresh tokens are one family (grants.ts): refreshing in a loop leaves no record behind
// that outlives a short claim, any older refresh token of the grant (not only the one just before)
// is a reuse that ends the grant, a made-up token naming the grant changes nothing, and a
// family keeps its newest two access tokens alive. Against a real redis-server, where the store's
// size can be read.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { REFRESHES_PER_MINUTE } from '../packages/http/src/oauth/grants.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import type { Service } from '../packages/http/src/service.js';
import { mcpStatus, signIn, tokenRequest } from './oauth-helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
let redis: RedisServer;
let connection: RedisClient;
let service: Service;

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  connection = await connectRedis(redis.url);
  service = await serveOAuth(sandbox, [], { store: new RedisOAuthStore(connection) });
}, 30_000);
afterAll(async () => {
  await service?.close();
  await connection?.close();
  await redis?.stop();
  await sandbox?.close();
});

/** The OAuth keys that live longer than `ms`: what the store keeps beyond short claims and limits. */
async function lastingKeys(ms: number): Promise<string[]> {
  const keys = (await connection.command(['KEYS', 'engage:oauth:*'])) as string[];
  const ttls = await Promise.all(keys.map((key) => connection.command(['PTTL', key])));
  return keys.filter((_, index) => Number(ttls[index]) > ms || Number(ttls[index]) === -1).sort();
}

const refreshWith = (refresh: string, clientId: string) =>
  tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });

describe('refresh token families', () => {
  it('refreshing in a loop keeps the store the same size', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    let refresh = tokens.refresh;
    const sizes: number[] = [];
    for (let round = 0; round < 25; round += 1) {
      const fresh = await refreshWith(refresh, tokens.clientId);
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
      refresh = fresh.body.refresh_token as string;
      sizes.push((await lastingKeys(5 * 60 * 1000)).length);
    }
    // Beyond the first rounds (the second live access token), nothing more lasts.
    expect(new Set(sizes.slice(2)).size).toBe(1);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${tokens.access}`)).status).toBe(401);
  });

  it('a refresh token several generations old is a reuse: the grant ends', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    const first = await refreshWith(tokens.refresh, tokens.clientId);
    const second = await refreshWith(first.body.refresh_token as string, tokens.clientId);
    const third = await refreshWith(second.body.refresh_token as string, tokens.clientId);
    expect(third.status).toBe(200);
    const stolen = await refreshWith(tokens.refresh, tokens.clientId);
    expect(stolen).toMatchObject({ status: 400, body: { error: 'invalid_grant', error_description: expect.stringContaining('revoked') } });
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${third.body.access_token as string}`)).status).toBe(401);
    expect((await refreshWith(third.body.refresh_token as string, tokens.clientId)).status).toBe(400);
  });

  it('a made-up refresh token naming a live grant changes nothing', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    const body = Buffer.from(tokens.refresh.slice('emcp_rt_'.length), 'base64url');
    // Same grant id, other random bytes and MAC: not ours, so not a reuse.
    const forged = `emcp_rt_${Buffer.concat([body.subarray(0, 16), randomBytes(body.length - 16)]).toString('base64url')}`;
    expect(await refreshWith(forged, tokens.clientId)).toMatchObject({ status: 400, body: { error_description: expect.stringContaining('unknown') } });
    const revoke = await fetch(`${service.url}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ token: forged, client_id: tokens.clientId }) });
    expect(revoke.status).toBe(200);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${tokens.access}`)).status).not.toBe(401);
    expect((await refreshWith(tokens.refresh, tokens.clientId)).status).toBe(200);
  });

  it('the access token before the newest still works; the one before that does not', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    const first = await refreshWith(tokens.refresh, tokens.clientId);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${tokens.access}`)).status).not.toBe(401);
    const second = await refreshWith(first.body.refresh_token as string, tokens.clientId);
    expect(second.status).toBe(200);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${tokens.access}`)).status).toBe(401);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${first.body.access_token as string}`)).status).not.toBe(401);
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${second.body.access_token as string}`)).status).not.toBe(401);
  });

  it('a grant refreshed more than 30 times in a minute is told to wait; its token is not spent and the grant lives', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    let current = { refresh: tokens.refresh, access: tokens.access };
    for (let round = 0; round < REFRESHES_PER_MINUTE; round += 1) {
      const fresh = await refreshWith(current.refresh, tokens.clientId);
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
      current = { refresh: fresh.body.refresh_token as string, access: fresh.body.access_token as string };
    }
    const refused = await refreshWith(current.refresh, tokens.clientId);
    expect(refused).toMatchObject({ status: 429, body: { error: 'temporarily_unavailable' } });
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${current.access}`)).status).not.toBe(401);
    // Not a reuse: the refused token stays the current one (no claim was made for it).
    const claims = (await connection.command(['KEYS', 'engage:oauth:rtused:*'])) as string[];
    const hash = createHash('sha256').update(current.refresh).digest('base64url');
    expect(claims).not.toContain(`engage:oauth:rtused:${hash}`);
  });

  it('two refreshes with the same token at once both get the one new refresh token (review44: reuse interval); a third ends the grant', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    const both = await Promise.all([refreshWith(tokens.refresh, tokens.clientId), refreshWith(tokens.refresh, tokens.clientId)]);
    expect(both.map((answer) => answer.status)).toEqual([200, 200]);
    expect(both[0]?.body.refresh_token).toBe(both[1]?.body.refresh_token);
    const third = await refreshWith(tokens.refresh, tokens.clientId);
    expect(third.body.error_description).toBe('the refresh token was already used; the grant is revoked');
    for (const access of [tokens.access, ...both.map((answer) => answer.body.access_token as string)]) {
      expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${access}`)).status).toBe(401);
    }
  });
});
