// A write that needs no yes (ENGAGE_CONFIRM=none, or a confirm-level operation under the default)
// was refused while the same write was still at the API only by the process that sent it (its
// journal). A host that gave up on a slow send and asked again reached, in remote mode, another
// replica behind the balancer, which sent the same message a second time; two stdio processes
// sharing a state directory did the same. The write is now marked in flight in the shared store
// too (Redis, the state directory), and refused there while it is on its way; once it has ended,
// it is still the caller's to repeat.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import { launchService, modernClient, stopService } from './service-process.js';
import { startRedis, type RedisServer } from './redis-server.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const sendsOf = (message: string) => sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.message === message).length;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());

describe('remote mode, two replicas on one Redis, ENGAGE_CONFIRM=none', () => {
  let redis: RedisServer;
  const children: ChildProcess[] = [];
  const clients: ModernClient[] = [];
  let urls: string[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    const env = {
      ENGAGE_BASE_URL: sandbox.baseUrl,
      ENGAGE_REDIS_URL: redis.url,
      ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
      ENGAGE_CONFIRM: 'none',
    };
    const started = [launchService(env), launchService(env)];
    children.push(...started.map((each) => each.child));
    urls = await Promise.all(started.map((each) => each.url));
  }, 30_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((each) => each.close()));
    await Promise.all(children.map((child) => stopService(child)));
    await redis?.stop();
  });

  it('the same send asked again on the other replica while the first is at the API: sent once, and the second is told so', async () => {
    const [a, b] = await Promise.all(urls.map((url) => modernClient(url, sandbox.keys.full, { info: { name: 'ungated', version: '0' } })));
    clients.push(a!, b!);
    const params = { msisdn: '081234567890', message: 'asked again on another replica' };
    const call = (on: ModernClient) =>
      on.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } } as never) as Promise<Record<string, any>>;
    sandbox.injectFault({ kind: 'delay', delayMs: 1500, operationId: SEND });
    const before = requestsAtApi(sandbox, SEND);
    const first = call(a!);
    await until('the first send at the API', () => requestsAtApi(sandbox, SEND) > before);
    const again = await call(b!);
    expect((await first).isError, textOf((await first) as never)).toBeFalsy();
    expect(requestsAtApi(sandbox, SEND) - before, textOf(again as never)).toBe(1);
    expect(sendsOf(params.message)).toBe(1);
    expect(again.isError).toBe(true);
    expect(structuredOf(again as never).outcome).toBe('unknown');
    expect(textOf(again as never)).toMatch(/still being sent by a replica of this service/);
    // Once it has ended, the same send is the caller's to repeat, on either replica.
    const repeated = await call(b!);
    expect(repeated.isError, textOf(repeated as never)).toBeFalsy();
    expect(sendsOf(params.message)).toBe(2);
  });
});

describe('stdio, two built servers on one state directory, ENGAGE_CONFIRM=none', () => {
  it('the same send asked of the other server while the first is at the API: sent once', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'engage-ungated-'));
    const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: stateDir };
    const [one, two] = await Promise.all([launchServer('channel', env), launchServer('channel', env)]);
    try {
      const params = { msisdn: '081234567891', message: 'asked again of another server' };
      const call = (server: LaunchedServer) =>
        server.client.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } }) as Promise<CallToolResult>;
      sandbox.injectFault({ kind: 'delay', delayMs: 1500, operationId: SEND });
      const before = requestsAtApi(sandbox, SEND);
      const first = call(one!);
      await until('the first send at the API', () => requestsAtApi(sandbox, SEND) > before);
      const again = await call(two!);
      expect((await first).isError, textOf(await first)).toBeFalsy();
      expect(requestsAtApi(sandbox, SEND) - before, textOf(again)).toBe(1);
      expect(again.isError).toBe(true);
      expect(textOf(again)).toMatch(/still being sent by this server or another one sharing its state directory/);
    } finally {
      await Promise.all([one?.close(), two?.close()]);
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
