// A 2025 session's call ends with its dropped POST (review36-remote-cancel), but the question it was
// asking the person (elicitation/create) was awaited on the SDK's signal alone: it stayed open until
// the client answered it late or 10 minutes passed, and the call with it. The question now takes the
// call's own signal, and is withdrawn at the drop; a yes given after it sends nothing.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, requestsAtApi, until } from './helpers.js';
import { launchService, stopService } from './service-process.js';
import { droppingFetch } from './helpers/dropping-fetch.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let url: string;
let child: ChildProcess | undefined;
let log: string[];
beforeAll(async () => {
  sandbox = await startSandbox();
  const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_LOG_LEVEL: 'info' });
  child = started.child;
  log = started.stderr;
  url = await started.url;
}, 30_000);
afterAll(async () => {
  if (child) await stopService(child, 'SIGKILL');
  await sandbox?.close();
});

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
    const headers = { authorization: `Bearer ${sandbox.keys.full}` };
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/channel', url), { requestInit: { headers }, fetch: dropping }));
    try {
      const [before, carried] = [requestsAtApi(sandbox, SEND), countCarriedOut(sandbox, SEND)];
      const logged = log.length;
      const params = { msisdn: '081234567890', message: 'asked, then the client went away' };
      void client.callTool({ name: 'channel_action', arguments: { operationId: SEND, params } }).catch(() => undefined);
      await until('the person asked', () => asked === 1);
      drop(0);
      await until('the call ended at the service', () => /channel\.whatsapp\.send failed: .*abort/i.test(log.slice(logged).join('')));
      answer?.({ action: 'accept', content: { confirm: true } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(requestsAtApi(sandbox, SEND) - before).toBe(0);
      expect(countCarriedOut(sandbox, SEND) - carried).toBe(0);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
