// review8: SIGTERM "finishes the calls in flight" (Drain), but a call is counted only while its
// HTTP response is open. A client that drops its connection while its write is out (a host's
// cancel, a proxy's timeout) ends the count; the replica then exits at once, with the write still
// out. The API carries it out, and nothing of it is settled: its idempotency key answers "still
// being sent, or the server stopped ... unknown" for 24 hours, and the audit record has no line.
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

async function launch(): Promise<{ url: string; child: ChildProcess }> {
  const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: SECRET, ENGAGE_CONFIRM: 'none' });
  children.push(started.child);
  return { url: await started.url, child: started.child };
}

/** The connection itself is dropped when `drop` aborts (as a proxy's timeout or a host's crash would). */
async function client(url: string, drop?: AbortSignal): Promise<ModernClient> {
  const dropping = drop ? (input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, signal: drop }) : undefined;
  return modernClient(url, sandbox.keys.full, { info: { name: 'review8', version: '0' }, ...(dropping ? { fetch: dropping as typeof fetch } : {}) });
}

const sends = () => sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send');

/** Waits for `done()` to hold, checking every 20 ms (an ordering, never a duration, is what the test asserts). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await redis?.stop();
  await sandbox?.close();
});

describe('review8: SIGTERM while a write is out for a client that went away', () => {
  it('waits for the write, so its idempotency key answers what happened', async () => {
    const params = { msisdn: '081234567890', message: 'Pesanan 4711 dikirim' };
    const args = { operationId: 'channel.whatsapp.send', params, idempotencyKey: 'order-4711' };
    sandbox.injectFault({ kind: 'delay', operationId: 'channel.whatsapp.send', delayMs: 2_000 });
    const first = await launch();
    const abort = new AbortController();
    const a = await client(first.url, abort.signal);
    const call = a.callTool({ name: 'channel_action', arguments: args } as never).catch((error: unknown) => error);
    await until(() => sandbox.requests().some((seen) => seen.operationId === 'channel.whatsapp.send')); // the send is at the API now
    abort.abort(); // the host cancels / the connection drops
    await call;
    const exitedAt = await stopService(first.child).then(() => Date.now());
    await until(() => sends().length > 0);
    const carried = sends();
    expect(carried).toHaveLength(1);
    const second = await launch();
    const b = await client(second.url);
    const repeat = (await b.callTool({ name: 'channel_action', arguments: args } as never)) as Record<string, any>;
    await b.close().catch(() => undefined);
    second.child.kill('SIGTERM');
    expect(sends()).toHaveLength(1);
    // The message went out; the drain must have waited for its answer, so the key knows it.
    expect(structuredOf(repeat as never).outcome, textOf(repeat as never)).toBe('done');
    expect(exitedAt, 'the replica exited before the API answered its write').toBeGreaterThanOrEqual((carried[0] as { at: number }).at);
  }, 30_000);
});
