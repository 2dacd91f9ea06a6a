// Two replicas of remote mode on one real Redis and one sandbox, each with a 2026-07-28 client of
// /mcp/channel under the same key, and the WhatsApp send that the confirmation tests repeat.
import type { ChildProcess } from 'node:child_process';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { launchService, modernClient, stopService } from './service-process.js';
import { startRedis, type RedisServer } from './redis-server.js';

export const STATE_SECRET = 'a-shared-state-secret-of-more-than-32-bytes';

export interface TwoReplicas {
  sandbox: Sandbox;
  redis: RedisServer;
  a: ModernClient;
  b: ModernClient;
  stop(): Promise<void>;
}

export async function startTwoReplicas(clientName: string): Promise<TwoReplicas> {
  const sandbox = await startSandbox();
  const redis = await startRedis();
  const children: ChildProcess[] = [];
  const clients: ModernClient[] = [];
  const stop = async () => {
    await Promise.allSettled(clients.map((each) => each.close()));
    await Promise.all(children.map((child) => stopService(child)));
    await redis.stop();
    await sandbox.close();
  };
  try {
    const started = [0, 1].map(() => launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: STATE_SECRET }));
    children.push(...started.map((each) => each.child));
    for (const each of started) clients.push(await modernClient(await each.url, sandbox.keys.full, { info: { name: clientName, version: '0' } }));
  } catch (error) {
    await stop();
    throw error;
  }
  return { sandbox, redis, a: clients[0]!, b: clients[1]!, stop };
}

/** channel.whatsapp.send on `on`, with these arguments beside the operationId (params, confirmationToken). */
export const whatsappSend = (on: ModernClient, args: Record<string, unknown>) =>
  on.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', ...args } } as never) as Promise<Record<string, any>>;

/** How many WhatsApp messages with this text the sandbox carried out. */
export const whatsappSendsOf = (sandbox: Sandbox, message: string) =>
  sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.params.message === message).length;
