// Review 22b: the token and revocation endpoints when the OAuth store (Redis) does not answer. The
// client's registration could not be read, and the read's failure was taken for "no such client":
// 401 invalid_client, "unknown client, or its authentication failed". A client told that drops its
// registration (the SDK's own OAuth client does) and has the person sign in again, for a Redis blip.
// clients.ts already throws its own capacity problems on as "try again"; the store's are ours too.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { RedisUnavailableError, connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import type { Service } from '../packages/http/src/service.js';
import { signIn, tokenRequest } from './oauth-helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
let redis: RedisServer;
let real: RedisClient;
let service: Service;
let down = false;

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  real = await connectRedis(redis.url);
  const flaky: RedisClient = {
    command: (args) => (down ? Promise.reject(new RedisUnavailableError('Redis is not connected (reconnecting)')) : real.command(args)),
    close: () => real.close(),
  };
  service = await serveOAuth(sandbox, [], { store: new RedisOAuthStore(flaky) });
}, 30_000);
afterAll(async () => {
  await service?.close();
  await real?.close();
  await redis?.stop();
  await sandbox?.close();
});

it('a refresh or a revocation while Redis is down is "try again" (503), never "unknown client" (401)', async () => {
  const tokens = await signIn(service.url, sandbox.keys.full);
  down = true;
  try {
    const refresh = await tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    expect(refresh, JSON.stringify(refresh.body)).toMatchObject({ status: 503, body: { error: 'temporarily_unavailable' } });
    const revoke = await fetch(`${service.url}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: tokens.refresh, client_id: tokens.clientId }),
    });
    expect(revoke.status).toBe(503);
  } finally {
    down = false;
  }
  const later = await tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
  expect(later.status, JSON.stringify(later.body)).toBe(200);
});
