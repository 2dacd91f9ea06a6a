// Review finding: in remote mode the daily message cap is counted per domain, not per key.
// What must hold (README, Guardrails): ENGAGE_CAP_MESSAGES_PER_DAY is "the most messages per key
// per local day: campaign recipients, channel.whatsapp.send and inbox.ticket.reply together". Remote
// mode keeps the counters in memory per process; one process serving /mcp (or /mcp/inbox and
// /mcp/channel) must still count one key's sends of every domain against the one cap.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { countCarriedOut, makeClient, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let service: Service;
beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_CONFIRM: 'none', ENGAGE_CAP_MESSAGES_PER_DAY: '1' },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
  });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

describe('review: remote mode counts one key against one daily cap', () => {
  it('a cap of 1: one inbox reply, then a WhatsApp send with the same key is refused', async () => {
    const client = makeClient({ kind: 'v1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', service.url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }),
    );
    try {
      const before = countCarriedOut(sandbox, 'inbox.ticket.reply') + countCarriedOut(sandbox, 'channel.whatsapp.send');
      const reply = await client.callTool({
        name: 'inbox_action',
        arguments: { operationId: 'inbox.ticket.reply', params: { ticketID: 'TCK-1001', message: 'Satu' } },
      });
      expect(structuredOf(reply).outcome, textOf(reply)).toBe('done');
      const whatsapp = await client.callTool({
        name: 'channel_action',
        arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '6281277771099', message: 'Dua' } },
      });
      // Must hold: the key's one message today is used; nothing more is sent.
      expect(countCarriedOut(sandbox, 'inbox.ticket.reply') + countCarriedOut(sandbox, 'channel.whatsapp.send') - before, textOf(whatsapp)).toBe(1);
      expect(structuredOf(whatsapp).outcome).toBe('refused');
    } finally {
      await client.close();
    }
  });
});
