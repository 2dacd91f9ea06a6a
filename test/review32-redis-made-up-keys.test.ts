// Review 32 (a hostile caller on a shared service): every write that reached an end gets an audit
// line, in its key's own record, a Redis list kept without expiry. A key the API refuses (made up:
// any string passes as a key until the API answers 401) got a record of its own too, so anyone who
// can reach the service grew its Redis by a list and its head per made-up key, for ever; with Redis
// on noeviction (as it must be), a full Redis then refuses every tenant's writes. A write the API
// refused the key for, of a key without a record of its own, is now written to one shared record
// of refused keys (capped like any key's); a key with a record keeps such lines in it.
import { expect, it } from 'vitest';
import { remoteAuditSecret, verifyAuditLines } from '../shared/src/call/audit.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { RedisClient } from '../packages/http/src/redis.js';
import { REFUSED_KEYS_AUDIT } from '../packages/http/src/redis-guard-store.js';
import { structuredOf, textOf } from './helpers.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';

const STATE_SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
let sandbox: Sandbox;
let redis: RedisServer;
let admin: RedisClient;
const { children } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis, admin } = rig);
});

it('writes with twenty made-up keys leave one audit record of refused keys, not one record each', async () => {
  const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: STATE_SECRET, ENGAGE_CONFIRM: 'none' });
  children.push(started.child);
  const url = await started.url;
  for (let index = 0; index < 20; index++) {
    const client = await modernClient(url, `made-up-key-${index}-${'x'.repeat(24)}`);
    const reply = (await client.callTool({
      name: 'channel_action',
      arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message: 'hello' } },
    } as never)) as Record<string, any>;
    expect(textOf(reply as never)).toMatch(/HTTP 401/);
    await client.close();
  }
  const own = await modernClient(url, sandbox.keys.full);
  const sent = await own.callTool({
    name: 'channel_action',
    arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message: 'hello' } },
  } as never);
  expect(structuredOf(sent as never).outcome).toBe('done');
  await own.close();
  const lists = ((await admin.command(['KEYS', 'engage:audit:*'])) as string[]).filter((key) => !key.endsWith(':head')).sort();
  expect(lists).toHaveLength(2);
  const refused = (await admin.command(['LRANGE', `engage:audit:{${REFUSED_KEYS_AUDIT}}`, 0, -1])) as string[];
  expect(refused).toHaveLength(20);
  expect(new Set(refused.map((line) => (JSON.parse(line) as { key: string }).key)).size).toBe(20);
  expect(verifyAuditLines(remoteAuditSecret(new TextEncoder().encode(STATE_SECRET)), refused).ok).toBe(true);
}, 60_000);
