// Remote mode's replicas as the tests of its shared state run them: one sandbox, one real Redis (and
// an admin connection to it), a temporary folder, and the services and clients a test starts, all
// stopped after the file's tests (beforeAll/afterAll registered). `onReady` gets them before the tests.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { connectRedis, type RedisClient } from '../../packages/http/src/redis.js';
import { startSandbox, type Sandbox } from '../../packages/sandbox/src/index.js';
import { startRedis, type RedisServer } from '../redis-server.js';
import { stopService } from '../service-process.js';

export interface ServicesOnRedis {
  sandbox: Sandbox;
  redis: RedisServer;
  admin: RedisClient;
  dir: string;
}

/** `children` and `clients`: what the tests start goes there, to be stopped and closed after them. */
export function servicesOnRedisPerFile(onReady: (rig: ServicesOnRedis) => void): { children: ChildProcess[]; clients: ModernClient[] } {
  const children: ChildProcess[] = [];
  const clients: ModernClient[] = [];
  let rig: Partial<ServicesOnRedis> = {};
  beforeAll(async () => {
    const sandbox = await startSandbox();
    const redis = await startRedis();
    rig = { sandbox, redis, admin: await connectRedis(redis.url), dir: mkdtempSync(join(tmpdir(), 'engage-replicas-')) };
    onReady(rig as ServicesOnRedis);
  }, 30_000);
  afterAll(async () => {
    await Promise.allSettled(clients.map((each) => each.close()));
    await Promise.all(children.map((child) => stopService(child)));
    await rig.admin?.close();
    await rig.redis?.stop();
    await rig.sandbox?.close();
    if (rig.dir) rmSync(rig.dir, { recursive: true, force: true });
  });
  return { children, clients };
}
