// review8: two replicas on one Redis. Two previews of the same send give two tokens (a host that
// asked twice, two tabs). On one replica the second token is refused once the first has sent
// ("sent since this yes"); across replicas the memory of sent writes is not shared, and the
// second, older yes sends the same message again.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { launchService, modernClient, stopService } from './service-process.js';
import { startRedis, type RedisServer } from './redis-server.js';

const SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
let sandbox: Sandbox;
let redis: RedisServer;
const children: ChildProcess[] = [];
const urls: string[] = [];
const clients: ModernClient[] = [];

async function launch(): Promise<string> {
  const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: SECRET });
  children.push(started.child);
  return started.url;
}

async function client(url: string): Promise<ModernClient> {
  const made = await modernClient(url, sandbox.keys.full, { info: { name: 'review8', version: '0' } });
  clients.push(made);
  return made;
}

const call = (on: ModernClient, args: Record<string, unknown>) =>
  on.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', ...args } } as never) as Promise<Record<string, any>>;
const sendsOf = (message: string) =>
  sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.params.message === message).length;

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  urls.push(...(await Promise.all([launch(), launch()])));
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((each) => each.close()));
  await Promise.all(children.map((child) => stopService(child)));
  await redis?.stop();
  await sandbox?.close();
});

describe('review8: two tokens for one send', () => {
  it('on one replica: the older token is refused after the newer one sent (the baseline)', async () => {
    const a = await client(urls[0]!);
    const params = { msisdn: '081234567890', message: 'one replica' };
    const t1 = structuredOf((await call(a, { params })) as never).confirmationToken as string;
    const t2 = structuredOf((await call(a, { params })) as never).confirmationToken as string;
    expect((await call(a, { params, confirmationToken: t2 })).isError).toBeFalsy();
    const second = await call(a, { params, confirmationToken: t1 });
    expect(second.isError, textOf(second as never)).toBe(true);
    expect(sendsOf(params.message)).toBe(1);
  });

  it('across two replicas: the older token is refused too, and the customer gets one message', async () => {
    const [a, b] = [await client(urls[0]!), await client(urls[1]!)];
    const params = { msisdn: '081234567890', message: 'two replicas' };
    const t1 = structuredOf((await call(a, { params })) as never).confirmationToken as string;
    const t2 = structuredOf((await call(a, { params })) as never).confirmationToken as string;
    expect((await call(a, { params, confirmationToken: t2 })).isError).toBeFalsy();
    const second = await call(b, { params, confirmationToken: t1 });
    expect(sendsOf(params.message), textOf(second as never)).toBe(1);
    expect(second.isError).toBe(true);
  });

  it('across two replicas, racing: two yeses at once send once', async () => {
    const [a, b] = [await client(urls[0]!), await client(urls[1]!)];
    const params = { msisdn: '081234567890', message: 'two replicas racing' };
    const t1 = structuredOf((await call(a, { params })) as never).confirmationToken as string;
    const t2 = structuredOf((await call(b, { params })) as never).confirmationToken as string;
    const results = await Promise.all([call(a, { params, confirmationToken: t1 }), call(b, { params, confirmationToken: t2 })]);
    expect(sendsOf(params.message), results.map((r) => textOf(r as never)).join('\n---\n')).toBe(1);
  });
});
