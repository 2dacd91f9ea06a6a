// Review 23c: one 2025 session, two requests in flight with the same JSON-RPC id (a client's bug,
// or two tabs of one host sharing a session). Found: the second took the first's place in the
// SDK's maps, so the first call's answer went to no one: its POST stayed open until the request
// deadline and was then cut, and a write's outcome was never told; a cancel of that id would have
// stopped the second. Now a request whose id is still being answered in its session is refused
// (409, nothing run), and the id is free again once it is answered, cancelled, or refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { WAIT_UNDER_LOAD } from './helpers.js';

let sandbox: Sandbox;
let service: Service;

beforeAll(async () => {
  sandbox = await startSandbox();
  // A short deadline, so a call whose answer went to no one fails here instead of waiting 12 minutes.
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => undefined, requestTimeoutMs: 5_000 });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

/** A 2025-06-18 session on /mcp with the full key: post(body) sends one message in it. */
async function openSession(): Promise<(body: unknown, headers?: Record<string, string>, signal?: AbortSignal) => Promise<{ status: number; text: string }>> {
  const url = `${service.url}/mcp`;
  const auth = { authorization: `Bearer ${sandbox.keys.full}` };
  const opened = await fetch(url, {
    method: 'POST',
    headers: { ...HEADERS, ...auth },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  });
  await opened.text();
  const session = { ...auth, 'mcp-session-id': opened.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-06-18' };
  const post = async (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) => {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...HEADERS, ...session, ...headers },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
      return { status: response.status, text: await response.text() };
    } catch (error) {
      return { status: 0, text: `no answer: ${String((error as { cause?: Error }).cause?.message ?? error)}` };
    }
  };
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return post;
}

const call = (id: number | string, name: string, operationId: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: { operationId } },
});
const sent = (operationId: string) => sandbox.requests().filter((request) => request.operationId === operationId).length;

describe('two requests with one id in one session', () => {
  it('the second is refused while the first is answered; the first gets its own answer; the id serves again after', async () => {
    const post = await openSession();
    const before = sent('contact.list');
    sandbox.injectFault({ kind: 'delay', delayMs: 1_500, operationId: 'contact.list' });
    const first = post(call(7, 'contact_read', 'contact.list'));
    await expect.poll(() => sent('contact.list'), WAIT_UNDER_LOAD).toBe(before + 1);
    const quotaBefore = sent('billing.quota');
    const second = await post(call(7, 'billing_get', 'billing.quota'));
    expect(second.status, second.text).toBe(409);
    expect(JSON.parse(second.text)).toMatchObject({ error: 'request_id_in_use' });
    expect(JSON.parse(second.text).message).toMatch(/still being answered in this session: nothing was run/);
    expect(sent('billing.quota')).toBe(quotaBefore);
    // The string "7" is another id: served at once.
    const other = await post(call('7', 'billing_get', 'billing.quota'));
    expect(other.status, other.text).toBe(200);
    expect(other.text).toContain('"id":"7"');
    expect(other.text).toContain('messageQuota');
    const answered = await first;
    expect(answered.status, answered.text).toBe(200);
    expect(answered.text).toContain('"id":7');
    expect(answered.text).toContain('contact.list');
    const again = await post(call(7, 'billing_get', 'billing.quota'));
    expect(again.status, again.text).toBe(200);
    expect(again.text).toContain('messageQuota');
  });

  it('a cancelled request’s id is free again', async () => {
    const post = await openSession();
    const before = sent('contact.list');
    sandbox.injectFault({ kind: 'delay', delayMs: 1_500, operationId: 'contact.list' });
    // As a client does on a cancel, it stops reading the first call's stream (the SDK sends no answer to a cancelled request).
    const reading = new AbortController();
    const first = post(call(8, 'contact_read', 'contact.list'), {}, reading.signal);
    await expect.poll(() => sent('contact.list'), WAIT_UNDER_LOAD).toBe(before + 1);
    reading.abort();
    const cancelled = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8, reason: 'user' } });
    expect(cancelled.status).toBe(202);
    const again = await post(call(8, 'billing_get', 'billing.quota'));
    expect(again.status, again.text).toBe(200);
    expect(again.text).toContain('messageQuota');
    await first;
  });

  it('a request the transport refused (no Accept for the stream) leaves its id free', async () => {
    const post = await openSession();
    const refused = await post(call(9, 'billing_get', 'billing.quota'), { accept: 'application/json' });
    expect(refused.status).toBe(406);
    const again = await post(call(9, 'billing_get', 'billing.quota'));
    expect(again.status, again.text).toBe(200);
    expect(again.text).toContain('messageQuota');
  });
});
