// The sandbox's own behaviour over HTTP: auth, scopes, limits, states, bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 20 });
});
afterAll(() => sandbox.close());

async function api(method: string, path: string, options: { key?: string; bearer?: boolean; body?: unknown } = {}) {
  const key = options.key ?? sandbox.keys.full;
  const response = await fetch(sandbox.baseUrl + path, {
    method,
    headers: { ...(options.bearer ? { authorization: `Bearer ${key}` } : { 'x-api-key': key }), 'content-type': 'application/json' },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as { status: number; errorCode: number; data: any; message?: string },
  };
}

describe('sandbox', () => {
  it('prints its address and keys as the first stdout line of the CLI shape', () => {
    expect(sandbox.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(sandbox.keys)).toEqual(expect.arrayContaining(['full', 'readOnly', 'expired', 'revoked']));
  });

  it('answers with the envelope, with either header form', async () => {
    const viaHeader = await api('GET', '/api/user/users');
    const viaBearer = await api('GET', '/api/user/users', { bearer: true });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.json).toMatchObject({ status: 200, errorCode: 0 });
    expect(viaBearer.json.data).toEqual(viaHeader.json.data);
    expect(viaHeader.headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    expect(viaHeader.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(viaHeader.headers.get('ratelimit-reset')).toMatch(/^\d+$/);
  });

  it('refuses invalid, expired and revoked keys with 401, and missing scopes with 403', async () => {
    expect((await api('GET', '/api/user/users', { key: 'eng_live_nope' })).status).toBe(401);
    expect((await api('GET', '/api/user/users', { key: sandbox.keys.expired })).status).toBe(401);
    expect((await api('GET', '/api/user/users', { key: sandbox.keys.revoked })).status).toBe(401);
    const forbidden = await api('DELETE', '/api/user/users/x', { key: sandbox.keys.readOnly });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toMatch(/contact\.delete/);
  });

  it('keeps tenants apart', async () => {
    const a = await api('GET', '/api/user/v1/dashboard/setting');
    const b = await api('GET', '/api/user/v1/dashboard/setting', { key: sandbox.keys.otherTenant });
    expect(a.json.data.companyName).not.toBe(b.json.data.companyName);
  });

  it('limits requests per key with 429 and Retry-After', async () => {
    const key = sandbox.createKey(['contact.read'], { rateLimit: 3 });
    const statuses = [];
    for (let index = 0; index < 5; index++) statuses.push((await api('GET', '/api/user/users', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await api('GET', '/api/user/users', { key });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('creates campaigns as drafts, sends once, deducts quota, completes', async () => {
    const before = (await api('GET', '/api/ai/v1/quota')).json.data.messageQuota.remaining;
    const created = await api('POST', '/api/campaign/campaigns', { body: { name: 'T', message: 'M', channel: 'telegram' } });
    const id = created.json.data._id;
    expect(created.json.data.status).toBe('draft');
    expect((await api('POST', `/api/campaign/campaigns/${id}/send`)).status).toBe(200);
    expect((await api('POST', `/api/campaign/campaigns/${id}/send`)).status).toBe(409);
    await expect.poll(async () => (await api('GET', `/api/campaign/campaigns/${id}/progress`)).json.data.status, { timeout: 5000 }).toBe('completed');
    const after = (await api('GET', '/api/ai/v1/quota')).json.data.messageQuota.remaining;
    expect(before - after).toBe(created.json.data.totalRecipients);
    expect((await api('POST', `/api/campaign/campaigns/${id}/cancel`)).status).toBe(409);
    expect((await api('DELETE', `/api/campaign/campaigns/${id}`)).status).toBe(200);
    expect((await api('GET', `/api/campaign/campaigns/${id}/progress`)).status).toBe(404);
  });

  it('cancels the rest of a sending campaign', async () => {
    const slow = await startSandbox({ sendStepMs: 5_000 });
    try {
      const headers = { 'x-api-key': slow.keys.full, 'content-type': 'application/json' };
      const created: any = await (
        await fetch(`${slow.baseUrl}/api/campaign/campaigns`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: 'T', message: 'M', channel: 'whatsapp' }),
        })
      ).json();
      const id = created.data._id;
      await fetch(`${slow.baseUrl}/api/campaign/campaigns/${id}/send`, { method: 'POST', headers });
      const cancelled: any = await (await fetch(`${slow.baseUrl}/api/campaign/campaigns/${id}/cancel`, { method: 'POST', headers })).json();
      expect(cancelled.data).toMatchObject({ status: 'cancelled', sentCount: 0 });
    } finally {
      await slow.close();
    }
  });

  it('appends replies to a ticket, closes it, and refuses replies after', async () => {
    const reply = await api('POST', '/api/ai/v1/tickets/TCK-1002/reply', { body: { message: 'Kami cek ya' } });
    expect(reply.status).toBe(200);
    const ticket = await api('GET', '/api/ai/v1/tickets/TCK-1002');
    expect(ticket.json.data.messages.at(-1)).toMatchObject({ from: 'agent', text: 'Kami cek ya' });
    expect((await api('POST', '/api/ai/v1/tickets/TCK-1002/close')).status).toBe(200);
    expect((await api('POST', '/api/ai/v1/tickets/TCK-1002/reply', { body: { message: 'x' } })).status).toBe(409);
  });

  it('keeps the conversation history of a deleted contact, and deletes product images', async () => {
    const tickets = (await api('GET', '/api/ai/v1/tickets')).json.data;
    const contacts = (await api('GET', '/api/user/users')).json.data;
    const withTicket = contacts.find((contact: { msisdn: string }) => tickets.some((ticket: { msisdn: string }) => ticket.msisdn === contact.msisdn));
    expect((await api('DELETE', `/api/user/users/${withTicket._id}`)).status).toBe(200);
    const still = (await api('GET', '/api/ai/v1/tickets')).json.data.filter((ticket: { msisdn: string }) => ticket.msisdn === withTicket.msisdn);
    expect(still.length).toBeGreaterThan(0);

    const product = (await api('GET', '/api/product/v1/products')).json.data[0];
    const deleted = await api('DELETE', `/api/product/v1/products/${product._id}`);
    expect(deleted.json.data.imagesDeleted).toBe(2);
    expect(sandbox.tenant('A').images.has(product._id)).toBe(false);
  });

  it('answers bad input with a 4xx envelope and changes nothing', async () => {
    const count = sandbox.tenant('A').contacts.length;
    const carried = sandbox.carriedOut().length;
    for (const body of [{ name: 'X', msisdn: '0812' }, { msisdn: '6281234567890' }, { name: 'X', msisdn: '6281234567890', email: 'no' }]) {
      const answer = await api('POST', '/api/user/users', { body });
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ status: 400, errorCode: expect.any(Number) });
    }
    expect((await api('PUT', '/api/user/users/unknown', { body: { name: 'x' } })).status).toBe(404);
    expect((await api('GET', '/api/ai/v1/tickets/status/weird')).status).toBe(400);
    expect((await api('POST', '/api/campaign/campaigns', { body: { name: 'x', message: 'y', channel: 'sms' } })).status).toBe(400);
    expect(sandbox.tenant('A').contacts.length).toBe(count);
    expect(sandbox.carriedOut().length).toBe(carried);
  });

  it('routes literal segments before parameters, and records the route it matched', async () => {
    sandbox.clearLogs();
    await api('GET', '/api/ai/v1/tickets/stats');
    await api('GET', '/api/ai/v1/tickets/st%61ts');
    expect(sandbox.requests().map((request) => request.operationId)).toEqual(['inbox.ticket.stats', 'inbox.ticket.get']);
  });

  it('injects faults and records what it carried out', async () => {
    sandbox.clearLogs();
    sandbox.injectFault({ kind: 'status', status: 503, operationId: 'contact.list' });
    expect((await api('GET', '/api/user/users')).status).toBe(503);
    expect((await api('GET', '/api/user/users')).status).toBe(200);
    sandbox.injectFault({ kind: 'reset-after', operationId: 'contact.create' });
    await expect(api('POST', '/api/user/users', { body: { name: 'Reset', msisdn: '6281299990000' } })).rejects.toThrow();
    expect(sandbox.carriedOut().map((entry) => entry.operationId)).toEqual(['contact.create']);
  });
});
