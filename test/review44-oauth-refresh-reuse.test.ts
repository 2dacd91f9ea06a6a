// Review 44: a grant's refresh tokens rotate on every use, and one presented after its rotation was
// taken as stolen: the grant ended. But two processes sharing one token file (several Claude Code
// sessions), or a client whose refresh answer was lost, present the same refresh token twice within
// moments, and the person had to sign in again. Now the token just replaced, presented again within
// 10 seconds of its rotation, is answered once with a new access token and the refresh token its
// rotation gave (so every holder ends with the same current one), on any replica; a third use, or
// one after the window, still ends the grant. Two replicas share a real redis-server.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { mcpStatus, signIn, tokenRequest } from './oauth-helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

let sandbox: Sandbox;
let redis: RedisServer;
const connections: RedisClient[] = [];
const replicas: Service[] = [];
const kek = randomBytes(32);

async function replica(publicUrl?: string): Promise<Service> {
  const connection = await connectRedis(redis.url);
  connections.push(connection);
  const service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    oauth: { kek, store: new RedisOAuthStore(connection, 'r44r:'), ...(publicUrl ? { publicUrl } : {}) },
  });
  replicas.push(service);
  return service;
}

let one: Service;
let two: Service;
beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  one = await replica();
  two = await replica(one.url);
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(replicas.map((service) => service.close()));
  await Promise.allSettled(connections.map((connection) => connection.close()));
  await redis?.stop();
  await sandbox?.close();
});

const refreshOn = (service: Service, refresh: string, clientId: string) =>
  tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });
const works = async (access: unknown) => (await mcpStatus(`${one.url}/mcp`, `Bearer ${access as string}`)).status !== 401;

describe('a refresh token presented again just after its rotation', () => {
  it('is answered once, on another replica, with a new access token and the same new refresh token; a third use ends the grant', async () => {
    const tokens = await signIn(one.url, sandbox.keys.full);
    const first = await refreshOn(one, tokens.refresh, tokens.clientId);
    expect(first.status).toBe(200);
    const again = await refreshOn(two, tokens.refresh, tokens.clientId);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.refresh_token).toBe(first.body.refresh_token);
    expect(again.body.access_token).not.toBe(first.body.access_token);
    expect(await works(again.body.access_token)).toBe(true);
    expect(await works(first.body.access_token)).toBe(true);

    const third = await refreshOn(one, tokens.refresh, tokens.clientId);
    expect(third.body.error).toBe('invalid_grant');
    expect(await works(again.body.access_token)).toBe(false);
    expect((await refreshOn(two, first.body.refresh_token as string, tokens.clientId)).status).toBe(400);
  });

  it('by two holders at once, on two replicas: both get tokens, and the grant goes on', async () => {
    const tokens = await signIn(one.url, sandbox.keys.full);
    const [a, b] = await Promise.all([refreshOn(one, tokens.refresh, tokens.clientId), refreshOn(two, tokens.refresh, tokens.clientId)]);
    expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([200, 200]);
    expect(a.body.refresh_token).toBe(b.body.refresh_token);
    const next = await refreshOn(two, a.body.refresh_token as string, tokens.clientId);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(await works(next.body.access_token)).toBe(true);
  });

  it('after the window ends the grant, as before', async () => {
    const tokens = await signIn(one.url, sandbox.keys.full);
    const first = await refreshOn(one, tokens.refresh, tokens.clientId);
    expect(first.status).toBe(200);
    // The window's end, as Redis would reach it 10 seconds on: what the rotation left for it expires.
    const left = (await (connections[0] as RedisClient).command(['KEYS', 'r44r:rtprev:*'])) as string[];
    expect(left.length).toBeGreaterThan(0);
    await (connections[0] as RedisClient).command(['DEL', ...left]);
    const late = await refreshOn(two, tokens.refresh, tokens.clientId);
    expect(late.body.error).toBe('invalid_grant');
    expect(await works(first.body.access_token)).toBe(false);
  });
});
