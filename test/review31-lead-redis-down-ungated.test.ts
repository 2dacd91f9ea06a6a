// A write that needs no yes is marked in the shared store too (so the same write at the API is
// refused on every replica), but it needs the store for nothing else: with no cap and no
// idempotency key, a Redis that does not answer must not refuse it (review9's rule). Through the
// built service: Redis stopped, the write goes out once, and the log says it went without its mark.
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

it('a stopped Redis does not refuse a write with no cap and no idempotency key: it is sent once, without its shared mark', async () => {
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
  const sent = (await client.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } } as never)) as Record<string, any>;
  expect(sent.isError, textOf(sent as never)).toBeFalsy();
  expect(structuredOf(sent as never).outcome).toBe('done');
  expect(sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.message === params.message)).toHaveLength(1);
  expect(started.stderr.join('')).toMatch(/channel\.whatsapp\.send goes without its mark in the shared store/);
}, 30_000);
