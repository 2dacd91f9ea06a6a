// Review 32 (answers): an id that spells another operation's route is refused before anything is
// sent, and the refusal said "Use <that operation> for that." Right for a read by id that spells a
// read (ticketID "stats": use inbox.ticket.stats), but a write was sent to an operation of another
// kind: contact.delete with id "import" was told "Use contact.import for that.", campaign.delete
// with id "analytics" "Use campaign.analytics for that.", inbox.ticket.close with ticketID "status"
// "Use inbox.ticket.byStatus for that.": an import, a read, nothing the model meant. Now, where the
// route is another method's, the refusal says the value cannot name a record there and to check
// it or ask the user. Through the built servers, as a host runs them.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, startSandbox, type DomainName, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => sandbox?.close());

async function callBuilt(domain: DomainName, tool: string, operationId: string, params: Record<string, unknown>) {
  const server = await launchServer(domain, { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none' });
  try {
    const result = await server.client.callTool({ name: tool, arguments: { operationId, params } });
    return (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
  } finally {
    await server.close();
  }
}

it.each([
  ['contact', 'contact_action', 'contact.delete', { id: 'import' }, 'contact.import'],
  ['campaign', 'campaign_action', 'campaign.delete', { id: 'analytics' }, 'campaign.analytics'],
  ['inbox', 'inbox_action', 'inbox.ticket.close', { ticketID: 'status' }, 'inbox.ticket.byStatus'],
] as const)('%s: %s with an id spelling a route of another kind is not sent to that operation', async (domain, tool, operationId, params, rival) => {
  const text = await callBuilt(domain, tool, operationId, params);
  expect(text).toMatch(new RegExp(`is not an id: it spells the route of ${rival.replace(/\./g, '\\.')}`));
  expect(text).not.toMatch(/for that\./);
  expect(text).toMatch(
    new RegExp(`so it cannot name a record for ${operationId.replace(/\./g, '\\.')}: check it, or ask the user for the right one\\. Nothing was sent\\.$`),
  );
  expect(sandbox.carriedOut()).toHaveLength(0);
});

it('a read by id spelling a read of its own tool still names that read', async () => {
  const text = await callBuilt('inbox', 'inbox_read', 'inbox.ticket.get', { ticketID: 'stats' });
  expect(text).toMatch(/spells the route of inbox\.ticket\.stats\. Use inbox\.ticket\.stats for that\. Nothing was sent\.$/);
});
