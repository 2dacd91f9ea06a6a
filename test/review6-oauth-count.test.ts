// Review 6: the OAuth store's counters (keys entered on consent pages per requester, registrations
// per requester) must always expire. A counter left without an expiry is a limit for ever: the
// requester (a whole office behind one address) could never enter a key again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisOAuthStore } from '../packages/http/src/oauth/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { startRedis, type RedisServer } from './redis-server.js';

let redis: RedisServer;
let connection: RedisClient;

beforeAll(async () => {
  redis = await startRedis();
  connection = await connectRedis(redis.url);
}, 30_000);
afterAll(async () => {
  await connection?.close();
  await redis?.stop();
});

/** A client whose first command runs in Redis but whose reply is lost (a command timeout, a dropped connection). */
function losingFirstReply(client: RedisClient): RedisClient {
  let lost = false;
  return {
    async command(args) {
      const reply = await client.command(args);
      if (lost) return reply;
      lost = true;
      throw new Error('redis: no reply in time');
    },
    close: () => client.close(),
  };
}

describe('a counter of the OAuth store over Redis', () => {
  it('expires even when the reply to its first count was lost', async () => {
    const store = new RedisOAuthStore(losingFirstReply(connection), 'review6:');
    await expect(store.count('keytries:192.0.2.7', 600_000)).rejects.toThrow();
    expect(await store.count('keytries:192.0.2.7', 600_000)).toBe(2);
    const ttl = Number(await connection.command(['PTTL', 'review6:keytries:192.0.2.7']));
    expect(ttl).toBeGreaterThan(0);
  });

  it('a counter left without an expiry (by an earlier version) gets one at its next count', async () => {
    await connection.command(['SET', 'review6:dcr:192.0.2.8', '25']);
    const store = new RedisOAuthStore(connection, 'review6:');
    expect(await store.count('dcr:192.0.2.8', 3_600_000)).toBe(26);
    expect(Number(await connection.command(['PTTL', 'review6:dcr:192.0.2.8']))).toBeGreaterThan(0);
  });
});
