// A real redis-server for a test file and connections to it, started before its tests and stopped
// after (beforeAll/afterAll registered): what the tests of remote mode's Redis store share.
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, type RedisClient } from '../../packages/http/src/redis.js';
import { type RedisServer, type RedisServerOptions, startRedis } from '../redis-server.js';

/** The service's ENGAGE_STATE_SECRET in these tests, as the store takes it. */
export const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');

/**
 * `clients` is filled before the tests (one connection per URL `urls` gives, by default `count` to
 * the server as it is); `server()` is the redis-server. `options` as startRedis takes them (ACL users).
 */
export function redisPerFile(
  count: number,
  options: RedisServerOptions = {},
  urls: (url: string) => string[] = (url) => Array.from({ length: count }, () => url),
): { clients: RedisClient[]; server: () => RedisServer } {
  const clients: RedisClient[] = [];
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    redis = await startRedis(options);
    clients.push(...(await Promise.all(urls(redis.url).map((url) => connectRedis(url)))));
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await redis?.stop();
  });
  const server = () => {
    if (!redis) throw new Error('the redis-server starts in beforeAll');
    return redis;
  };
  return { clients, server };
}
