// review36: a replica on Redis stopped with a short drain while a write waited out a 429's
// Retry-After: the close cancelled the write, but its settle ("refused": nothing was sent) did not
// reach Redis before the exit, and the other replica answered the same write "still being sent by
// a replica" (false) until the mark's lease ended. Now the drain, as it starts refusing, ends the
// write's wait at once (nothing sent, the client told so), and the writes' settles have a floor
// before Redis is closed: the other replica sends the write as new, once.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { launchService, modernClient, stopService } from './service-process.js';
import { STATE_SECRET } from './two-replicas.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let redis: RedisServer;
const children: ChildProcess[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
}, 30_000);
afterAll(async () => {
  await Promise.all(children.map((child) => stopService(child, 'SIGKILL')));
  await redis?.stop();
  await sandbox?.close();
});

/** A replica on the shared Redis, its drain 200 ms. */
async function replica(): Promise<{ child: ChildProcess; url: string }> {
  const started = launchService({
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: STATE_SECRET,
    ENGAGE_CONFIRM: 'none',
    ENGAGE_HTTP_DRAIN_TIMEOUT_MS: '200',
  });
  children.push(started.child);
  return { child: started.child, url: await started.url };
}

type Result = Parameters<typeof textOf>[0];
interface AnyClient {
  callTool(params: never): Promise<unknown>;
  close(): Promise<void>;
}

const eras = {
  '2025 session': async (url: string): Promise<AnyClient> => {
    const headers = { authorization: `Bearer ${sandbox.keys.full}` };
    const client = new Client({ name: 'review36', version: '0' });
    await client.connect(new V1HttpTransport(new URL('/mcp/channel', url), { requestInit: { headers } }));
    return client as unknown as AnyClient;
  },
  '2026-07-28': async (url: string): Promise<AnyClient> => modernClient(url, sandbox.keys.full) as unknown as Promise<AnyClient>,
};

const action = (params: Record<string, unknown>) => ({ name: 'channel_action', arguments: { operationId: SEND, params } }) as never;

describe.each(Object.entries(eras))('%s', (era, connect) => {
  it('a write waiting out a 429 on a replica told to stop is not sent, and another replica sends it as new', async () => {
    const [first, second] = [await replica(), await replica()];
    const leaving = await connect(first.url);
    const staying = await modernClient(second.url, sandbox.keys.full);
    try {
      const params = { msisdn: '081234567890', message: `waiting as its replica stops (${era})` };
      const [before, carried] = [requestsAtApi(sandbox, SEND), countCarriedOut(sandbox, SEND)];
      sandbox.injectFault({ kind: 'rate-limit', operationId: SEND, retryAfter: '5' });
      const waiting = (leaving.callTool(action(params)) as Promise<Result>).catch((error: unknown) => error as Error);
      await until('the 429 answered', () => requestsAtApi(sandbox, SEND) > before);
      await stopService(first.child);
      const again = (await staying.callTool(action(params))) as Result;
      expect(structuredOf(again).outcome, textOf(again)).toBe('done');
      expect(countCarriedOut(sandbox, SEND) - carried).toBe(1);
      expect(requestsAtApi(sandbox, SEND) - before).toBe(2);
      // Its own client was told, before its replica went, that nothing was sent (a client left without an answer waits for none).
      const told = await Promise.race([waiting, new Promise<Error>((resolve) => setTimeout(() => resolve(new Error('no answer')), 2_000))]);
      expect(told instanceof Error ? told.message : structuredOf(told).outcome).toBe('refused');
      expect(textOf(told as Result)).toMatch(/not sent and nothing was carried out/);
      // Said as a replica's restart, not as a host that closed its server.
      expect(textOf(told as Result)).toMatch(/in remote mode, this replica is being restarted/);
    } finally {
      await Promise.allSettled([leaving.close(), staying.close()]);
      await stopService(second.child);
    }
  }, 40_000);
});

it('a write still at the API when a short drain ends is cut off, and its unknown outcome reaches Redis before the exit', async () => {
  const [first, second] = [await replica(), await replica()];
  const leaving = await modernClient(first.url, sandbox.keys.full);
  const staying = await modernClient(second.url, sandbox.keys.full);
  try {
    const params = { msisdn: '081234567890', message: 'at the API as its replica stops' };
    const before = requestsAtApi(sandbox, SEND);
    sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 3_000 });
    void leaving.callTool(action(params)).catch(() => undefined);
    await until('the send at the API', () => requestsAtApi(sandbox, SEND) > before);
    await stopService(first.child);
    const again = (await staying.callTool(action(params))) as Result;
    // Cut off by the exit, it may have been carried out: said so (a write that needs no yes is sent again, as after any
    // unknown outcome), never "still being sent" by a replica that is gone.
    expect(textOf(again)).not.toMatch(/still being sent/);
    expect(textOf(again)).toMatch(/also sent by a replica .* whether that one was carried out is unknown/);
    expect(requestsAtApi(sandbox, SEND) - before).toBe(2);
  } finally {
    await Promise.allSettled([leaving.close(), staying.close()]);
    await stopService(second.child);
  }
}, 40_000);
