// OAuth on two replicas sharing a real redis-server (each with its own Redis connection, one public
// URL): a token issued on one works on the other, a revoked one on neither, a refresh token spent
// on one is spent on both; and the Redis dump holds neither the tenant key nor any token in clear.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { makeClient, textOf } from './helpers.js';
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
    oauth: { kek, store: new RedisOAuthStore(connection), ...(publicUrl ? { publicUrl } : {}) },
  });
  replicas.push(service);
  return service;
}

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(replicas.map((service) => service.close()));
  await Promise.allSettled(connections.map((connection) => connection.close()));
  await redis?.stop();
  await sandbox?.close();
});

it('a token from one replica works on the other; revoked on one, it works on neither', async () => {
  const one = await replica();
  const two = await replica(one.url);
  const tokens = await signIn(one.url, sandbox.keys.full);
  const client = makeClient({ kind: 'v2-modern' });
  const headers = { authorization: `Bearer ${tokens.access}` };
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', two.url), { requestInit: { headers } }));
  const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
  expect(read.isError, textOf(read)).toBeFalsy();
  await client.close();

  // A refresh on the second replica spends the token for both.
  const fresh = await tokenRequest(two.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
  expect(fresh.status).toBe(200);
  // Presented again at once it is answered once more (review44's reuse interval), on either replica; a third use is a reuse.
  const once = await tokenRequest(one.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
  expect(once.body.refresh_token).toBe(fresh.body.refresh_token);
  const reused = await tokenRequest(one.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
  expect(reused.body.error).toBe('invalid_grant');
  for (const service of [one, two]) expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${fresh.body.access_token as string}`)).status).toBe(401);

  const again = await signIn(one.url, sandbox.keys.full);
  const revoke = await fetch(`${two.url}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ token: again.access, client_id: again.clientId }) });
  expect(revoke.status).toBe(200);
  for (const service of [one, two]) expect((await mcpStatus(`${service.url}/mcp`, `Bearer ${again.access}`)).status).toBe(401);

  // What Redis holds: no key, no token, no code in clear.
  const dump = connections[0] as RedisClient;
  const keys = (await dump.command(['KEYS', 'engage:oauth:*'])) as string[];
  expect(keys.length).toBeGreaterThan(0);
  const values = await Promise.all(
    keys.map((key) => dump.command(['TYPE', key]).then((type) => (type === 'string' ? dump.command(['GET', key]) : dump.command(['SMEMBERS', key])))),
  );
  const text = JSON.stringify([keys, values]);
  for (const secret of [sandbox.keys.full, tokens.access, tokens.refresh, again.access, again.refresh]) expect(text).not.toContain(secret);
}, 60_000);
