// A 2025 session's call ends with its dropped POST (review36-remote-cancel), but the question it was
// asking the person (elicitation/create) was awaited on the SDK's signal alone: it stayed open until
// the client answered it late or 10 minutes passed, and the call with it. The question now takes the
// call's own signal, and is withdrawn at the drop; a yes given after it sends nothing.
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { countCarriedOut, requestsAtApi, until } from './helpers.js';
import { droppingFetch } from './helpers/dropping-fetch.js';
import { launchedServicePerFile } from './helpers/launched-service-per-file.js';

const SEND = 'channel.whatsapp.send';
const file = launchedServicePerFile({ ENGAGE_LOG_LEVEL: 'info' });

describe('a 2025 session whose POST drops while the person is asked', () => {
  it('withdraws the question and ends the call; a yes given after it sends nothing', async () => {
    const { fetch: dropping, drop } = droppingFetch();
    const client = new Client({ name: 'dropped-question', version: '0' }, { capabilities: { elicitation: {} } });
    let answer: ((result: ElicitResult) => void) | undefined;
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked++;
      return new Promise<ElicitResult>((resolve) => {
        answer = resolve;
      });
    });
    const headers = { authorization: `Bearer ${file.sandbox.keys.full}` };
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/channel', file.url), { requestInit: { headers }, fetch: dropping }));
    try {
      const [before, carried] = [requestsAtApi(file.sandbox, SEND), countCarriedOut(file.sandbox, SEND)];
      const logged = file.log.length;
      const params = { msisdn: '081234567890', message: 'asked, then the client went away' };
      void client.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } }).catch(() => undefined);
      await until('the person asked', () => asked === 1);
      drop(0);
      await until('the call ended at the service', () => /channel\.whatsapp\.send failed: .*abort/i.test(file.log.slice(logged).join('')));
      answer?.({ action: 'accept', content: { confirm: true } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(requestsAtApi(file.sandbox, SEND) - before).toBe(0);
      expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(0);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
