// End to end: the seven built servers over stdio, as a host runs them, against the sandbox.
// Every one of the 37 operations is called; each tool definition is snapshotted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DOMAINS, launchServer, startSandbox, type DomainName, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { ALL_OPERATIONS, structuredOf, textOf, toolOf } from './helpers.js';

let sandbox: Sandbox;
const servers = {} as Record<DomainName, LaunchedServer>;

beforeAll(async () => {
  // Slow sending, so campaign.cancel has a queue to stop.
  sandbox = await startSandbox({ sendStepMs: 3_000 });
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_LOG_LEVEL: 'debug' };
  await Promise.all(DOMAINS.map(async (domain) => (servers[domain] = await launchServer(domain, env))));
});
afterAll(async () => {
  await Promise.all(Object.values(servers).map((server) => server.close()));
  await sandbox?.close();
});

const called = new Set<string>();

/** Calls an operation; a preview is confirmed with its token, as a user's yes would. */
async function run(operationId: string, params?: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<CallToolResult> {
  const domain = operationId.split('.')[0] as DomainName;
  const args = { operationId, ...(params ? { params } : {}), ...extra };
  let result = (await servers[domain].client.callTool({ name: toolOf(operationId), arguments: args })) as CallToolResult;
  if (structuredOf(result).outcome === 'preview') {
    const confirmationToken = structuredOf(result).confirmationToken;
    result = (await servers[domain].client.callTool({ name: toolOf(operationId), arguments: { ...args, confirmationToken } })) as CallToolResult;
  }
  expect(result.isError, `${operationId}: ${textOf(result)}`).toBeFalsy();
  called.add(operationId);
  return result;
}
const dataOf = (result: CallToolResult) => structuredOf(result).data as any;

describe('the seven servers over stdio', () => {
  it('list their tools, with definitions that never change unseen', async () => {
    const definitions: Record<string, unknown> = {};
    for (const domain of DOMAINS) {
      const { tools } = await servers[domain].client.listTools();
      expect(tools).toHaveLength(2);
      for (const tool of tools) definitions[tool.name] = tool;
    }
    expect(definitions).toMatchSnapshot();
  });

  it('run every operation of the catalog, each answer valid against its outputSchema', async () => {
    // The SDK client validates structuredContent against the listed outputSchema and throws
    // on a mismatch; listing first makes sure it knows every schema.
    for (const domain of DOMAINS) await servers[domain].client.listTools();
    const A = sandbox.tenant('A');
    // contact
    const contacts = dataOf(await run('contact.list', undefined, { limit: 5 }));
    expect(contacts).toHaveLength(5);
    expect(dataOf(await run('contact.byCampaign', { campaignID: A.campaigns[0]!._id })).length).toBeGreaterThan(0);
    const created = dataOf(await run('contact.create', { name: 'Tes Kontak', msisdn: '+62 812-7777-0001', email: 'tes@example.co.id' }));
    expect(created.msisdn).toBe('6281277770001');
    await run('contact.update', { id: created._id, name: 'Tes Kontak Baru' });
    expect(dataOf(await run('contact.import', { users: [{ name: 'Impor Satu', msisdn: '081277770002' }] }))).toMatchObject({ imported: 1 });
    await run('contact.delete', { id: created._id });

    // campaign
    await run('campaign.list');
    await run('campaign.analytics');
    const campaign = dataOf(await run('campaign.create', { name: 'E2E', message: 'Halo', channel: 'whatsapp' }));
    await run('campaign.send', { id: campaign._id });
    expect(dataOf(await run('campaign.progress', { id: campaign._id })).status).toBe('sending');
    await run('campaign.cancel', { id: campaign._id });
    const draft = A.campaigns.find((item) => item.status === 'draft')!;
    await run('campaign.delete', { id: draft._id });

    // inbox
    await run('inbox.ticket.list');
    await run('inbox.ticket.stats');
    expect(dataOf(await run('inbox.ticket.get', { ticketID: 'TCK-1001' })).ticketID).toBe('TCK-1001');
    await run('inbox.ticket.byStatus', { status: 'open' });
    await run('inbox.ticket.create', { msisdn: '0812 7777 0003', channel: 'whatsapp', message: 'Halo dari E2E' });
    await run('inbox.ticket.reply', { ticketID: 'TCK-1001', message: 'Balasan E2E' });
    await run('inbox.ticket.close', { ticketID: 'TCK-1003' });

    // channel
    await run('channel.list');
    expect(dataOf(await run('channel.get', { channelId: 'ch_A_wa' }))[0].channelId).toBe('ch_A_wa');
    await run('channel.whatsapp.status');
    await run('channel.whatsapp.templates');
    await run('channel.whatsapp.send', { msisdn: '081277770004', template: { name: 'order_update', language: 'id', parameters: ['Budi', 'INV-1'] } });

    // product
    const product = dataOf(await run('product.list'))[0];
    expect(dataOf(await run('product.get', { productID: product._id })).name).toBe(product.name);
    const newProduct = dataOf(await run('product.create', { name: 'Batik Tes', price: 100_000, stock: 3 }));
    await run('product.update', { productID: newProduct._id, price: 90_000 });
    await run('product.delete', { productID: newProduct._id });

    // billing and tenant
    const payments = dataOf(await run('billing.payment.list'));
    await run('billing.payment.get', { orderID: payments[0].orderID });
    await run('billing.subscription');
    await run('billing.quota');
    await run('billing.usage');
    await run('tenant.list');
    await run('tenant.setting');

    expect([...called].sort()).toEqual(ALL_OPERATIONS.map((op) => op.id).sort());
    // Each write was carried out exactly once by the API.
    const writes = sandbox.carriedOut().map((entry) => entry.operationId);
    const expected = ALL_OPERATIONS.filter((op) => op.risk !== 'safe').map((op) => op.id);
    expect(writes.sort()).toEqual(expected.sort());
  });

  it('refuse bad input with a clear error and send nothing', async () => {
    sandbox.clearLogs();
    const cases: Array<[DomainName, string, Record<string, unknown>, RegExp]> = [
      ['contact', 'contact_action', { operationId: 'contact.nope' }, /not an operation of contact_action/],
      ['contact', 'contact_action', { operationId: 'contact.create', params: { name: 'X', msisdn: '555-0100' } }, /params\.msisdn is not a valid number/],
      ['contact', 'contact_action', { operationId: 'contact.create', params: { name: 42, msisdn: '081234567890' } }, /params\.name expected a string/],
      ['contact', 'contact_action', { operationId: 'contact.delete', params: { id: '..' } }, /params\.id must be an id/],
      ['contact', 'contact_action', { operationId: 'contact.delete', params: { id: '' } }, /params\.id must not be empty/],
      ['contact', 'contact_action', { operationId: 'contact.delete' }, /params\.id is required/],
      ['inbox', 'inbox_read', { operationId: 'inbox.ticket.get', params: { ticketID: 'stats' } }, /spells the route of inbox\.ticket\.stats/],
      ['campaign', 'campaign_read', { operationId: 'campaign.send', params: { id: 'x' } }, /belongs to the tool campaign_action/],
      ['campaign', 'campaign_read', { operationId: 'campaign.list', limit: 0 }, /limit/],
    ];
    for (const [domain, name, args, message] of cases) {
      const result = (await servers[domain].client.callTool({ name, arguments: args })) as CallToolResult;
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toMatch(message);
      expect(textOf(result), JSON.stringify(args)).toMatch(/Nothing was sent\./);
      expect(textOf(result)).not.toMatch(/\.\.\. /);
    }
    expect(sandbox.requests()).toEqual([]);
  });

  it('tell the model what went wrong upstream, and what to do', async () => {
    const result = (await servers.campaign.client.callTool({
      name: 'campaign_read',
      arguments: { operationId: 'campaign.progress', params: { id: 'no-such-campaign' } },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Not found \(HTTP 404\).*campaign\.list/);
  });

  it('never write the key to stderr', () => {
    for (const domain of DOMAINS) {
      expect(servers[domain].stderr()).not.toContain(sandbox.keys.full);
    }
  });
});
