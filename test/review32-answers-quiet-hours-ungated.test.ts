// Review 32 (answers): a send refused inside the quiet hours told the model "Only if the user
// explicitly wants it sent now, call again with quietHoursOverride: true (the user sees that in the
// confirmation)". A send that asks for no confirmation has none: inbox.ticket.create with a first
// message (risk confirm) under the default ENGAGE_CONFIRM=destructive, or any send under
// ENGAGE_CONFIRM=none. There the model, told the user would see the override, called again with it
// and the message went to the customer at once, in the quiet hours, unseen by anyone. Now the
// refusal says the override must come from what the user said, and that a call that asks for no
// confirmation is sent at once. Through the built server, as a host runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
let server: LaunchedServer;
/** HH:MM (UTC) `minutes` from now. */
const clockIn = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString().slice(11, 16);
/** A window from an hour ago to three hours on: the test runs inside it, whatever the hour. */
const QUIET = `${clockIn(-60)}-${clockIn(180)}`;
beforeAll(async () => {
  sandbox = await startSandbox();
  // No ENGAGE_CONFIRM: the default (destructive), which does not gate inbox.ticket.create.
  server = await launchServer('inbox', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_QUIET_HOURS: QUIET });
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
});

const textOf = (result: Awaited<ReturnType<LaunchedServer['client']['callTool']>>) =>
  (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');

it('a refusal of a send that asks for no confirmation never says the user will see the override', async () => {
  const params = { msisdn: '628123400005', channel: 'whatsapp', message: 'Halo, tiket Anda sudah kami buka.' };
  const refused = await server.client.callTool({ name: 'inbox_action', arguments: { operationId: 'inbox.ticket.create', params } });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toMatch(/^Refused by a guardrail: .*inside the quiet hours/);
  expect(textOf(refused)).not.toMatch(/sees that in the confirmation/);
  expect(textOf(refused)).toMatch(/Only if the user has said to send it now, inside the quiet hours, call again with quietHoursOverride: true/);
  expect(textOf(refused)).toMatch(/a call that asks for no confirmation is sent at once/);

  // What the override does here: the message goes out with no question to anyone.
  const overridden = await server.client.callTool({
    name: 'inbox_action',
    arguments: { operationId: 'inbox.ticket.create', params, quietHoursOverride: true },
  });
  expect((overridden.structuredContent as { outcome?: string }).outcome).toBe('done');
  expect(sandbox.carriedOut().filter((entry) => entry.operationId === 'inbox.ticket.create')).toHaveLength(1);
});
