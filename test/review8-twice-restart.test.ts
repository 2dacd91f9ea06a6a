// review8: a spent confirmationToken replayed after a restart of a single remote replica that has
// ENGAGE_STATE_SECRET set (allowed without ENGAGE_REDIS_URL). The secret survives the restart, the
// spent store (memory) and the write journal (memory) do not: the old token runs the send again.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { launchService, modernClient, stopService } from './service-process.js';

const SECRET = 'a-state-secret-of-more-than-thirty-two-bytes-long';
let sandbox: Sandbox;
const children: ChildProcess[] = [];

async function launch(): Promise<{ url: string; child: ChildProcess }> {
  const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_STATE_SECRET: SECRET });
  children.push(started.child);
  return { url: await started.url, child: started.child };
}

const client = (url: string) => modernClient(url, sandbox.keys.full, { info: { name: 'review8', version: '0' } });

const call = (on: ModernClient, args: Record<string, unknown>) =>
  on.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', ...args } } as never) as Promise<Record<string, any>>;
const sends = () => sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send').length;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await Promise.all(children.map((child) => stopService(child)));
  await sandbox?.close();
});

describe('review8: a spent token after a restart of the one replica (ENGAGE_STATE_SECRET, no Redis)', () => {
  it('is refused and sends nothing the second time', async () => {
    const params = { msisdn: '081234567890', message: 'Promo hari ini' };
    const first = await launch();
    const a = await client(first.url);
    const preview = await call(a, { params });
    const token = structuredOf(preview as never).confirmationToken as string;
    expect(token).toMatch(/^ct_/);
    const run = await call(a, { params, confirmationToken: token });
    expect(run.isError, textOf(run as never)).toBeFalsy();
    expect(sends()).toBe(1);
    await a.close().catch(() => undefined);
    await stopService(first.child);

    const second = await launch();
    const b = await client(second.url);
    const replay = await call(b, { params, confirmationToken: token });
    await b.close().catch(() => undefined);
    // The customer must get one message: the token was spent before the restart.
    expect(sends(), textOf(replay as never)).toBe(1);
    // The token is not honoured: nothing ran, and the person is asked again with a fresh preview.
    expect(structuredOf(replay as never).outcome, textOf(replay as never)).toBe('preview');
    expect(textOf(replay as never)).toMatch(/token/i);
  }, 30_000);
});
