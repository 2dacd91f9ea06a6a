// review35: remote mode, a client that goes away while its write is at the API: a 2026-07-28
// client's cancel is its POST's connection closed (the SDK sends no notifications/cancelled then),
// and a 2025 session's DELETE ends its calls. The write runs to its answer and is carried out; its
// answer reaches nobody. The same write asked again (a new connection, as a host's retry is) was
// sent again as new; now it is answered with that first answer, and nothing is sent.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { countCarriedOut, requestsAtApi, textOf, until } from './helpers.js';
import { modernClient } from './service-process.js';
import { launchedServicePerFile } from './helpers/launched-service-per-file.js';

const SEND = 'channel.whatsapp.send';
const file = launchedServicePerFile({ ENGAGE_CONFIRM: 'none' });

const call = (params: Record<string, unknown>) => ({ name: 'channel_action', arguments: { operationId: SEND, params } });

/** A 2026-07-28 client whose connections are dropped when `drop` aborts (its way to cancel). */
const droppingClient = (drop?: AbortSignal) =>
  modernClient(
    file.url,
    file.sandbox.keys.full,
    drop ? { fetch: ((input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, signal: drop })) as typeof fetch } : {},
  );

/** A 2025 session of the v1 client, and its transport (for the session's DELETE). */
async function sessionClient() {
  const transport = new V1HttpTransport(new URL('/mcp/channel', file.url), { requestInit: { headers: { authorization: `Bearer ${file.sandbox.keys.full}` } } });
  const client = new Client({ name: 'review35', version: '0' });
  await client.connect(transport);
  return { client, transport };
}

/** The same call on a new connection until the first has ended at the service (until then it is refused as still being sent). */
async function repeatOnceEnded(params: Record<string, unknown>) {
  const client = await droppingClient();
  try {
    for (;;) {
      const again = (await client.callTool(call(params) as never)) as Parameters<typeof textOf>[0];
      if (!/still being sent/.test(textOf(again))) return again;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Goes away as each kind of client does, once the write is at the API; resolves when the client has given up. */
const goAway = {
  '2026-07-28, its connection dropped': async (params: Record<string, unknown>, atApi: () => Promise<void>) => {
    const drop = new AbortController();
    const client = await droppingClient(drop.signal);
    const pending = client.callTool(call(params) as never).catch(() => undefined);
    await atApi();
    drop.abort();
    await pending;
  },
  '2025 session, DELETEd': async (params: Record<string, unknown>, atApi: () => Promise<void>) => {
    const { client, transport } = await sessionClient();
    void client.callTool(call(params)).catch(() => undefined);
    await atApi();
    await transport.terminateSession();
    await client.close().catch(() => undefined);
  },
};

describe.each(Object.entries(goAway))('%s', (name, leave) => {
  it('a send carried out after its client went away is not sent again by the repeat, which gets its answer', async () => {
    const params = { msisdn: '081234567890', message: `remote ${name}` };
    const [before, carried] = [requestsAtApi(file.sandbox, SEND), countCarriedOut(file.sandbox, SEND)];
    file.sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 1_000 });
    await leave(params, () => until('the send at the API', () => requestsAtApi(file.sandbox, SEND) > before));
    await until('the send carried out', () => countCarriedOut(file.sandbox, SEND) > carried);
    const repeat = await repeatOnceEnded(params);
    expect(textOf(repeat)).toMatch(/cancelled .* carried out: that call's answer, which never reached you, is repeated below, and nothing was sent again/);
    expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);
    expect(requestsAtApi(file.sandbox, SEND) - before).toBe(1);
  });
});
