// Review 32 (answers): a 404 was told a next step only for a read that takes no id (its address)
// and for an operation with a list that finds valid ids. Three answers ended at "not carried out":
// a write that takes no id (contact.create, channel.whatsapp.send: "Not found (HTTP 404): “…”.
// contact.create was not carried out; nothing was changed."), a read by a value no list gives
// (inbox.ticket.byStatus's status: "Not found (HTTP 404): “…”."), and an operation whose list was
// left out by ENGAGE_OPERATIONS_DENY (contact.delete without contact.list). Each now says what to
// do: which value to check, or that no id will help and what to tell the user. Through the built
// servers, as a host runs them.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { launchServer, startSandbox, type DomainName, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());
beforeEach(() => sandbox.clearFaults());

async function callBuilt(domain: DomainName, tool: string, args: Record<string, unknown>, env: Record<string, string> = {}) {
  const server = await launchServer(domain, { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none', ...env });
  try {
    const result = await server.client.callTool({ name: tool, arguments: args });
    const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
    return { text, structured: result.structuredContent as Record<string, unknown> | undefined, isError: result.isError };
  } finally {
    await server.close();
  }
}

it.each([
  ['contact', 'contact_action', 'contact.create', { name: 'Siti Aminah', msisdn: '628123400001' }],
  ['channel', 'channel_action', 'channel.whatsapp.send', { msisdn: '628123400002', message: 'Halo' }],
] as const)('a write that takes no id, answered 404, says no id helps and what to tell the user (%s)', async (domain, tool, operationId, params) => {
  sandbox.injectFault({ kind: 'status', status: 404, operationId, message: 'not found' });
  const answer = await callBuilt(domain, tool, { operationId, params });
  expect(answer.isError).toBe(true);
  expect(answer.structured?.outcome).toBe('refused');
  expect(answer.text).toContain(`${operationId} was not carried out; nothing was changed.`);
  expect(answer.text).toMatch(new RegExp(`${operationId.replace(/\./g, '\\.')} takes no id, so no other id will help`));
  expect(answer.text).toMatch(/ENGAGE_BASE_URL \(its path included\) may be wrong: tell the user/);
});

it('a read by a status the API does not know, answered 404, names the param to check and its expected form', async () => {
  sandbox.injectFault({ kind: 'status', status: 404, operationId: 'inbox.ticket.byStatus', message: 'not found' });
  const answer = await callBuilt('inbox', 'inbox_read', { operationId: 'inbox.ticket.byStatus', params: { status: 'archived' } });
  expect(answer.isError).toBe(true);
  expect(answer.text).toMatch(/^Not found \(HTTP 404\): “not found”\. The API has nothing for the value given in params\.status \(ticket status\): check it/);
  expect(answer.text).toMatch(/ask the user for the right value/);
});

it('a delete whose list is left out by ENGAGE_OPERATIONS_DENY, answered 404, asks for the right id instead of naming the list', async () => {
  const answer = await callBuilt(
    'contact',
    'contact_action',
    { operationId: 'contact.delete', params: { id: 'c-gone' } },
    { ENGAGE_OPERATIONS_DENY: 'contact.list' },
  );
  expect(answer.structured?.outcome).toBe('refused');
  expect(answer.text).toContain('contact.delete was not carried out; nothing was changed.');
  expect(answer.text).not.toMatch(/contact\.list/);
  expect(answer.text).toMatch(/The API has nothing for the value given in params\.id \(contact _id\): check it, or ask the user for the right value/);
});
