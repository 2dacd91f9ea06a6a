// Review 32 (answers): the confirmation of inbox.ticket.create with a first message read "Open a
// whatsapp ticket with 628… with the message “…”.": a person could take the message for a note on
// the ticket, and say yes to text that is delivered to the customer at once (as a reply is, which
// its own confirmation says). Now the statement says the message is sent to the customer at once;
// a ticket opened without one says no message is sent. Through the built server, as a host runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
let server: LaunchedServer;
beforeAll(async () => {
  sandbox = await startSandbox();
  server = await launchServer('inbox', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'all' });
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
});

async function previewOf(params: Record<string, unknown>): Promise<string> {
  const result = await server.client.callTool({ name: 'inbox_action', arguments: { operationId: 'inbox.ticket.create', params } });
  const structured = result.structuredContent as { outcome?: string; preview?: string };
  expect(structured.outcome).toBe('preview');
  return structured.preview ?? '';
}

it('a ticket opened with a message says the message goes to the customer at once', async () => {
  const preview = await previewOf({ msisdn: '628123400008', channel: 'whatsapp', message: 'Pesanan Anda sedang kami cek.' });
  expect(preview).toMatch(/^Open a ticket with 628123400008 on whatsapp and send the customer this message at once: “Pesanan Anda sedang kami cek\.”/);
});

it('a ticket opened without a message says none is sent', async () => {
  const preview = await previewOf({ msisdn: '628123400009', channel: 'email' });
  expect(preview).toMatch(/^Open a ticket with 628123400009 on email \(no message is sent to the customer\)\./);
});
