// The sandbox's routes against the API's own table (spec section 4): every endpoint answers at its method and
// path, needs exactly the scope the spec lists, and a key with that scope alone is let through. The table is
// written out here, not read from the catalog, so a catalog and a sandbox that drift together still fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, startSandbox, type Sandbox } from '../packages/sandbox/src/sandbox.js';

const SPEC = `
contact.list GET /api/user/users contact.read
contact.create POST /api/user/users contact.manage
contact.update PUT /api/user/users/{id} contact.manage
contact.delete DELETE /api/user/users/{id} contact.delete
contact.import POST /api/user/users/import contact.manage
contact.byCampaign GET /api/user/users/campaign/{campaignID} contact.read
campaign.list GET /api/campaign/campaigns campaign.read
campaign.analytics GET /api/campaign/campaigns/analytics campaign.read
campaign.create POST /api/campaign/campaigns campaign.manage
campaign.send POST /api/campaign/campaigns/{id}/send campaign.send
campaign.cancel POST /api/campaign/campaigns/{id}/cancel campaign.control
campaign.progress GET /api/campaign/campaigns/{id}/progress campaign.read
campaign.delete DELETE /api/campaign/campaigns/{id} campaign.manage
inbox.ticket.list GET /api/ai/v1/tickets inbox.read
inbox.ticket.create POST /api/ai/v1/tickets inbox.manage
inbox.ticket.stats GET /api/ai/v1/tickets/stats inbox.read
inbox.ticket.get GET /api/ai/v1/tickets/{ticketID} inbox.read
inbox.ticket.byStatus GET /api/ai/v1/tickets/status/{status} inbox.read
inbox.ticket.reply POST /api/ai/v1/tickets/{ticketID}/reply inbox.reply
inbox.ticket.close POST /api/ai/v1/tickets/{ticketID}/close inbox.manage
channel.list GET /api/channel/v1/channels channel.read
channel.get GET /api/channel/v1/channels/{channelId} channel.read
channel.whatsapp.status GET /api/channel/v1/whatsapp/status channel.read
channel.whatsapp.templates GET /api/channel/v1/whatsapp/cloud/templates channel.read
channel.whatsapp.send POST /api/channel/v1/notification/send/whatsapp inbox.reply
product.list GET /api/product/v1/products product.read
product.get GET /api/product/v1/products/{productID} product.read
product.create POST /api/product/v1/products product.manage
product.update PUT /api/product/v1/products/{productID} product.manage
product.delete DELETE /api/product/v1/products/{productID} product.manage
billing.payment.list GET /api/payment/v1/payment/history billing.read
billing.payment.get GET /api/payment/v1/payment/history/{orderID} billing.read
billing.subscription GET /api/user/v1/dashboard/subscription billing.read
billing.quota GET /api/ai/v1/quota quota.read
billing.usage GET /api/ai/v1/usage quota.read
tenant.setting GET /api/user/v1/dashboard/setting tenant.setting.read
tenant.list GET /api/user/v1/dashboard/tenant/list tenant.read
`
  .trim()
  .split('\n')
  .map((line) => line.split(' ') as [string, string, string, string]);

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

/** The endpoint with every path parameter an id no record has, and an empty JSON body for writes: nothing can be carried out. */
async function call(method: string, template: string, key: string) {
  const path = template.replace(/\{\w+\}/g, 'zz-no-such-record');
  const write = method === 'POST' || method === 'PUT';
  const response = await fetch(sandbox.baseUrl + path, {
    method,
    headers: { 'x-api-key': key, ...(write ? { 'content-type': 'application/json' } : {}) },
    ...(write ? { body: '{}' } : {}),
  });
  return { status: response.status, json: (await response.json()) as { errorCode: number } };
}

describe('the sandbox routes every endpoint of the spec with its scope', () => {
  it('lists the 17 scopes of spec section 5, no more', () => {
    expect([...ALL_SCOPES].sort()).toEqual([...new Set(SPEC.map(([, , , scope]) => scope))].sort());
  });

  it.each(SPEC)('%s: %s %s needs %s, and that scope alone is enough', async (operationId, method, path, scope) => {
    sandbox.clearLogs();
    const without = await call(method, path, sandbox.createKey(ALL_SCOPES.filter((other) => other !== scope)));
    expect(without.status).toBe(403);
    expect(without.json.errorCode).toBe(40300);
    const only = await call(method, path, sandbox.createKey([scope]));
    expect([401, 403, 429]).not.toContain(only.status);
    expect(only.json.errorCode).not.toBe(40400);
    expect(sandbox.requests().map((request) => request.operationId)).toEqual([operationId, operationId]);
    expect(sandbox.carriedOut()).toEqual([]);
  });
});
