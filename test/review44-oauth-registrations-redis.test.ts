// Review 44: client registrations with the OAuth store on Redis. Dynamic registration allowed 20 an
// hour per requester (an IPv6 /64) and nothing else: a /48 (65,536 /64s) made ~1.3 M an hour, each
// kept 30 days, until Redis's memory, and every tenant's service with it, was gone. Now a
// registration nobody has signed in with lives 24 hours (30 days from its first sign-in), a /48
// registers at most 200 an hour, and the service holds only so many unused registrations at once
// (here 300): past it, a new one pushes out the oldest unused (a refusal instead would let one flood
// a day keep every new client out), while a tenant's own registration stays and works, and one a
// person signs in with no longer counts among the unused.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore, RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { mcpStatus, REDIRECT, signIn, tokenRequest } from './oauth-helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const DAY_MS = 24 * 60 * 60 * 1000;
let sandbox: Sandbox;
let redis: RedisServer;
let connection: RedisClient;
let service: Service;

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  connection = await connectRedis(redis.url);
  const store = new RedisOAuthStore(connection, 'r44:', { count: 300, bytes: 1024 * 1024 });
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    oauth: { kek: randomBytes(32), store, trustedProxyHops: 1 },
  });
}, 30_000);
afterAll(async () => {
  await service?.close();
  await connection?.close();
  await redis?.stop();
  await sandbox?.close();
});

/** A registration from `address`, as the proxy in front says. */
async function registerFrom(address: string): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const response = await fetch(`${service.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ client_name: 'Filler', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
}

async function lifetimeOf(clientId: string): Promise<number> {
  return Number(await connection.command(['PTTL', `r44:client:${clientId}`]));
}

describe('client registrations on Redis', () => {
  it('one nobody signed in with lives a day; a sign-in gives it 30 days and takes it out of the unused', async () => {
    const unused = await registerFrom('2001:db8:100::1');
    expect(unused.status).toBe(201);
    const left = await lifetimeOf(unused.body.client_id as string);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(DAY_MS);
    const tenant = await signIn(service.url, sandbox.keys.full, { clientId: unused.body.client_id as string });
    expect(await lifetimeOf(tenant.clientId)).toBeGreaterThan(29 * DAY_MS);
    expect(await connection.command(['ZSCORE', 'r44:unused', `r44:client:${tenant.clientId}`])).toBeNull();
  });

  it('a /48 registers at most 200 an hour, whatever its /64s', { timeout: 60_000 }, async () => {
    const statuses: number[] = [];
    // Distinct /64s of 2001:db8:48::/48, 20 each (the /64's own limit), 220 in all.
    for (let at = 0; at < 220; at++) statuses.push((await registerFrom(`2001:db8:48:${(Math.floor(at / 20) + 1).toString(16)}::1`)).status);
    expect(statuses.slice(0, 200).every((status) => status === 201)).toBe(true);
    expect(new Set(statuses.slice(200))).toEqual(new Set([429]));
    // Another /48 is not held back by it.
    expect((await registerFrom('2001:db8:49::1')).status).toBe(201);
  });

  it("past the bound on unused registrations, a new one pushes out the oldest unused; a tenant's registration works on", { timeout: 60_000 }, async () => {
    await connection.command(['EVAL', "for _, key in ipairs(redis.call('KEYS', 'r44:*')) do redis.call('DEL', key) end", 0]);
    const tenant = await signIn(service.url, sandbox.keys.otherTenant);
    const made: string[] = [];
    for (let at = 0; at < 300; at++) {
      const registered = await registerFrom(`2001:db8:${(0x1000 + at).toString(16)}::1`);
      expect(registered.status).toBe(201);
      made.push(registered.body.client_id as string);
    }
    const bytesBefore = Number(await connection.command(['GET', 'r44:unused:bytes']));
    const newest = await registerFrom('2001:db8:2000::1');
    expect(newest.status).toBe(201);
    // The oldest unused is gone (record, its place among the unused, its bytes); the rest and the newest stay.
    expect(await lifetimeOf(made[0] as string)).toBe(-2);
    expect(await connection.command(['ZSCORE', 'r44:unused', `r44:client:${made[0]}`])).toBeNull();
    expect(await connection.command(['ZCARD', 'r44:unused'])).toBe(300);
    expect(Number(await connection.command(['GET', 'r44:unused:bytes']))).toBe(bytesBefore);
    expect(await lifetimeOf(made[1] as string)).toBeGreaterThan(0);
    expect(await lifetimeOf(newest.body.client_id as string)).toBeGreaterThan(0);
    // The tenant's own registration was never among them: its connection and refresh work on.
    expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${tenant.access}`)).status).not.toBe(401);
    const refreshed = await tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: tenant.refresh, client_id: tenant.clientId });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
  });
});

describe('the in-process store', () => {
  it('holds the same bound on disposable records, the oldest pushed out; one kept is not among them', async () => {
    const store = new MemoryOAuthStore(1_000, { count: 2, bytes: 1024 * 1024 });
    expect(await store.putDisposable('client:a', { name: 'a' }, DAY_MS)).toBe(0);
    expect(await store.putDisposable('client:b', { name: 'b' }, DAY_MS)).toBe(0);
    expect(await store.keep('client:a', { name: 'a' }, 30 * DAY_MS)).toBe(true);
    expect(await store.putDisposable('client:c', { name: 'c' }, DAY_MS)).toBe(0);
    expect(await store.putDisposable('client:d', { name: 'd' }, DAY_MS)).toBe(1);
    expect(await store.get('client:b')).toBeUndefined();
    expect(await store.get('client:a')).toEqual({ name: 'a' });
    expect(await store.get('client:c')).toEqual({ name: 'c' });
    expect(await store.get('client:d')).toEqual({ name: 'd' });
  });
});
