// review36: a 2025 session's call whose POST connection drops (no notifications/cancelled: the
// client just went away) ran on in its session: a write waiting out a 429 was sent after its client
// had gone, and a write carried out meanwhile had its answer lost (the service keeps no event store,
// so it can never be resumed) and was sent again by its repeat. Now the call ends with its POST, as
// a client's cancel ends it. A 2026-07-28 client's dropped POST already did (review35), and is
// checked beside it; a second POST of the same session is not touched by the first one's drop.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { countCarriedOut, requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import { modernClient } from './service-process.js';
import { droppingFetch } from './helpers/dropping-fetch.js';
import { launchedServicePerFile } from './helpers/launched-service-per-file.js';

const SEND = 'channel.whatsapp.send';
const READ = 'channel.list';
const file = launchedServicePerFile({ ENGAGE_CONFIRM: 'none', ENGAGE_LOG_LEVEL: 'info' });

type Result = Parameters<typeof textOf>[0];
interface AnyClient {
  callTool(params: never): Promise<unknown>;
  close(): Promise<void>;
}

const eras = {
  '2025 session': async (fetch: typeof globalThis.fetch): Promise<AnyClient> => {
    const headers = { authorization: `Bearer ${file.sandbox.keys.full}` };
    const client = new Client({ name: 'review36', version: '0' });
    await client.connect(new V1HttpTransport(new URL('/mcp/channel', file.url), { requestInit: { headers }, fetch }));
    return client as unknown as AnyClient;
  },
  '2026-07-28': async (fetch: typeof globalThis.fetch): Promise<AnyClient> =>
    modernClient(file.url, file.sandbox.keys.full, { fetch }) as unknown as Promise<AnyClient>,
};

const action = (params: Record<string, unknown>) => ({ name: 'channel_action', arguments: { operationId: SEND, params } }) as never;
const read = () => ({ name: 'channel_read', arguments: { operationId: READ, params: {} } }) as never;

/** The same call again on the same client (a 2025 client stays in its session), until the first has ended at the service. */
async function repeatOnceEnded(client: AnyClient, params: Record<string, unknown>): Promise<Result> {
  for (;;) {
    const again = (await client.callTool(action(params))) as Result;
    if (!/still being sent/.test(textOf(again))) return again;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(Object.entries(eras))('%s', (era, connect) => {
  it('a write waiting out a 429 whose POST dropped is not sent; its repeat is sent once, as new', async () => {
    const { fetch, drop } = droppingFetch();
    const client = await connect(fetch);
    try {
      const params = { msisdn: '081234567890', message: `dropped while waiting (${era})` };
      const [before, carried] = [requestsAtApi(file.sandbox, SEND), countCarriedOut(file.sandbox, SEND)];
      file.sandbox.injectFault({ kind: 'rate-limit', operationId: SEND, retryAfter: '3' });
      void client.callTool(action(params)).catch(() => undefined);
      await until('the 429 answered', () => requestsAtApi(file.sandbox, SEND) > before);
      drop(0);
      const repeat = await repeatOnceEnded(client, params);
      expect(structuredOf(repeat).outcome, textOf(repeat)).toBe('done');
      expect(textOf(repeat)).not.toMatch(/never reached you|also sent/);
      expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);
      // The 429, then the repeat: the dropped call sent nothing after its client had gone.
      expect(requestsAtApi(file.sandbox, SEND) - before).toBe(2);
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it('a write carried out after its POST dropped is not sent again by the repeat, which gets its answer', async () => {
    const { fetch, drop } = droppingFetch();
    const client = await connect(fetch);
    try {
      const params = { msisdn: '081234567890', message: `dropped at the API (${era})` };
      const [before, carried] = [requestsAtApi(file.sandbox, SEND), countCarriedOut(file.sandbox, SEND)];
      file.sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 1_000 });
      void client.callTool(action(params)).catch(() => undefined);
      await until('the send at the API', () => requestsAtApi(file.sandbox, SEND) > before);
      drop(0);
      await until('the send carried out', () => countCarriedOut(file.sandbox, SEND) > carried);
      const repeat = await repeatOnceEnded(client, params);
      expect(textOf(repeat)).toMatch(/cancelled .* carried out: that call's answer, which never reached you, is repeated below, and nothing was sent again/);
      expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);
      expect(requestsAtApi(file.sandbox, SEND) - before).toBe(1);
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it("a read waiting out a 429 whose POST dropped ends there; the client's next call on another POST is answered", async () => {
    const { fetch, drop } = droppingFetch();
    const client = await connect(fetch);
    try {
      const before = requestsAtApi(file.sandbox, READ);
      const logged = file.log.length;
      file.sandbox.injectFault({ kind: 'rate-limit', operationId: READ, retryAfter: '3' });
      void client.callTool(read()).catch(() => undefined);
      await until('the 429 answered', () => requestsAtApi(file.sandbox, READ) > before);
      drop(0);
      await until('the read ended, cancelled', () => /channel\.list failed: .*cancel/i.test(file.log.slice(logged).join('')));
      expect(requestsAtApi(file.sandbox, READ) - before).toBe(1);
      const next = (await client.callTool(read())) as Result;
      expect(next.isError, textOf(next)).toBeFalsy();
      expect(requestsAtApi(file.sandbox, READ) - before).toBe(2);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});

it('2025 session: one POST dropped ends its own call only; a call on a second POST of the session runs to its answer', async () => {
  const { fetch, drop } = droppingFetch();
  const client = await eras['2025 session'](fetch);
  try {
    const params = { msisdn: '081234567890', message: 'the second POST of a session' };
    const carried = countCarriedOut(file.sandbox, SEND);
    const [sendsBefore, before] = [requestsAtApi(file.sandbox, SEND), requestsAtApi(file.sandbox, READ)];
    file.sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 1_500 });
    file.sandbox.injectFault({ kind: 'delay', operationId: READ, delayMs: 1_500 });
    const sending = client.callTool(action(params)) as Promise<Result>;
    void client.callTool(read()).catch(() => undefined);
    await until('both at the API', () => requestsAtApi(file.sandbox, READ) > before && requestsAtApi(file.sandbox, SEND) > sendsBefore);
    drop(1);
    const sent = await sending;
    expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
    expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);
  } finally {
    await client.close().catch(() => undefined);
  }
});
