// Since a write that needs no yes is marked in the shared store too (so the same write at the API is
// refused on every replica), a Redis that does not answer refuses it, though it has no cap and no
// idempotency key to check. The answer said "this write's send caps and idempotency key could not
// be checked", which for such a write was not what kept it back; it now also names the check that
// did (whether the same write is already on its way), so the model and the operator are told the truth.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { launchService, modernClient, stopService } from './service-process.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let redis: RedisServer;
let child: ChildProcess | undefined;
let client: ModernClient | undefined;

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await client?.close().catch(() => undefined);
  if (child) await stopService(child);
  await redis?.stop();
  await sandbox?.close();
});

it('a stopped Redis refuses a write with no cap and no idempotency key, naming what could not be checked; nothing is sent', async () => {
  const started = launchService({
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
    ENGAGE_CONFIRM: 'none',
  });
  child = started.child;
  client = await modernClient(await started.url, sandbox.keys.full, { info: { name: 'redis-down', version: '0' } });
  await redis.stop();
  const params = { msisdn: '081234567890', message: 'while Redis is down' };
  const refused = (await client.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } } as never)) as Record<string, any>;
  expect(refused.isError).toBe(true);
  expect(structuredOf(refused as never).outcome).toBe('refused');
  expect(textOf(refused as never)).toMatch(
    /did not answer, so .*whether the same write is already on its way .*could not be checked: nothing was sent\. Ask again/,
  );
  expect(sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.message === params.message)).toHaveLength(0);
}, 30_000);
