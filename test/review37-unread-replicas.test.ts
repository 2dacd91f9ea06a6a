// review37: remote mode's replicas on one Redis. A write that needs no yes, carried out after its
// client went away (a 2026-07-28 client's dropped connection, a 2025 session's DELETE), kept its
// unread answer in its replica's memory only: the same write asked on another replica was sent
// again with a plain "Done". Redis now notes the write's answer as never read (an extra field of
// the write's hash), and the next identical call on any replica is told so and sends nothing, once.
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import type { RedisServer } from './redis-server.js';
import { launchService, modernClient } from './service-process.js';
import { servicesOnRedisPerFile } from './helpers/services-on-redis.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let redis: RedisServer;
const { children, clients } = servicesOnRedisPerFile((rig) => {
  ({ sandbox, redis } = rig);
});
let urls: [string, string];
beforeAll(async () => {
  const env = {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: 'a-shared-state-secret-of-more-than-32-bytes',
    ENGAGE_CONFIRM: 'none',
  };
  const started = [launchService(env), launchService(env)];
  children.push(...started.map((each) => each.child));
  urls = (await Promise.all(started.map((each) => each.url))) as [string, string];
}, 30_000);

type Result = Parameters<typeof textOf>[0];
const call = (params: Record<string, unknown>) => ({ name: 'channel_action', arguments: { operationId: SEND, params } });

/** A 2025 session of the v1 client on a replica, and its transport (for the session's DELETE). */
async function sessionClient(url: string) {
  const transport = new V1HttpTransport(new URL('/mcp/channel', url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } });
  const client = new Client({ name: 'review37', version: '0' });
  await client.connect(transport);
  return { client, transport };
}

/** Each era's client: one call on a replica (its own connection), and its way to go away while its write is at the API. */
const eras = {
  '2026-07-28': {
    callOn: async (url: string, params: Record<string, unknown>): Promise<Result> => {
      const client = await modernClient(url, sandbox.keys.full);
      clients.push(client);
      return (await client.callTool(call(params) as never)) as Result;
    },
    goAway: async (url: string, params: Record<string, unknown>, atApi: () => Promise<void>) => {
      const drop = new AbortController();
      const client = await modernClient(url, sandbox.keys.full, {
        fetch: ((input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, signal: drop.signal })) as typeof fetch,
      });
      const pending = client.callTool(call(params) as never).catch(() => undefined);
      await atApi();
      drop.abort();
      await pending;
    },
  },
  '2025': {
    callOn: async (url: string, params: Record<string, unknown>): Promise<Result> => {
      const { client } = await sessionClient(url);
      try {
        return (await client.callTool(call(params))) as Result;
      } finally {
        await client.close().catch(() => undefined);
      }
    },
    goAway: async (url: string, params: Record<string, unknown>, atApi: () => Promise<void>) => {
      const { client, transport } = await sessionClient(url);
      void client.callTool(call(params)).catch(() => undefined);
      await atApi();
      await transport.terminateSession();
      await client.close().catch(() => undefined);
    },
  },
};

describe.each(Object.entries(eras))('%s', (era, { callOn, goAway }) => {
  /** The same call on a replica until the first has ended (until then it is refused as still being sent). */
  async function repeatOnceEnded(url: string, params: Record<string, unknown>): Promise<Result> {
    for (;;) {
      const again = await callOn(url, params);
      if (!/still being sent/.test(textOf(again))) return again;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The client on replica A goes away while the send is at the API; resolves once it was carried out. */
  async function leftMidSend(params: Record<string, unknown>): Promise<number> {
    const [before, carried] = [requestsAtApi(sandbox, SEND), countCarriedOut(sandbox, SEND)];
    sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 800 });
    await goAway(urls[0], params, () => until('the send at the API', () => requestsAtApi(sandbox, SEND) > before));
    await until('the send carried out', () => countCarriedOut(sandbox, SEND) > carried);
    return carried;
  }

  it('the other replica does not send again a write whose client went away mid-send, and says so, once', async () => {
    const params = { msisdn: '081234567891', message: `unread on another replica (${era})` };
    const carried = await leftMidSend(params);
    const repeat = await repeatOnceEnded(urls[1], params);
    expect(countCarriedOut(sandbox, SEND) - carried, textOf(repeat)).toBe(1);
    expect(repeat.isError, textOf(repeat)).toBeFalsy();
    expect(structuredOf(repeat)).toMatchObject({ outcome: 'done' });
    expect(textOf(repeat)).toMatch(/sent by a replica of this service \(this one or another\) at \d{4}-/);
    expect(textOf(repeat)).toMatch(/carried out: its answer never reached you, and nothing was sent again/);
    // Told once, on any replica: the same call after that is sent.
    const meant = await callOn(urls[0], params);
    expect(textOf(meant)).not.toMatch(/never reached you/);
    expect(countCarriedOut(sandbox, SEND) - carried).toBe(2);
  });

  it('the replica that kept the answer gives it (with its data), and the other replica then sends', async () => {
    const params = { msisdn: '081234567892', message: `unread kept in memory (${era})` };
    const carried = await leftMidSend(params);
    const repeat = await repeatOnceEnded(urls[0], params);
    expect(textOf(repeat)).toMatch(/that call's answer, which never reached you, is repeated below/);
    const elsewhere = await callOn(urls[1], params);
    expect(textOf(elsewhere)).not.toMatch(/never reached you/);
    expect(countCarriedOut(sandbox, SEND) - carried).toBe(2);
  });

  it('a write whose answer was read is sent again by the other replica, as before', async () => {
    const params = { msisdn: '081234567893', message: `read (${era})` };
    const carried = countCarriedOut(sandbox, SEND);
    expect(structuredOf(await callOn(urls[0], params))).toMatchObject({ outcome: 'done' });
    const again = await callOn(urls[1], params);
    expect(textOf(again)).not.toMatch(/never reached you/);
    expect(countCarriedOut(sandbox, SEND) - carried).toBe(2);
  });
});
