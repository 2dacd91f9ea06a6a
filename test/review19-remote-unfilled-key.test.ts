// Review 19: a connector whose header still reads `Bearer ${ENGAGE_API_KEY}` (a host that did not
// expand it) had that text sent to the API as the key; the API refused it and the model was told
// the key was invalid and to have a new one made, when the fix is the connector's settings. Remote
// mode now refuses such a key itself, says what it is (never quoting it), and sends nothing.
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnfilledKey } from '@engage-mcp/shared';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, textOf } from './helpers.js';

let sandbox: Sandbox;
let service: Service;

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => undefined });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
};

async function post(headers: Record<string, string>) {
  const response = await fetch(new URL('/mcp/contact', service.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(initialize),
  });
  return { status: response.status, body: await response.text() };
}

describe('a key the connector did not fill in', () => {
  it.each([
    ['authorization', 'Bearer ${ENGAGE_API_KEY}'],
    ['authorization', 'Bearer ${env:ENGAGE_API_KEY}'],
    ['authorization', 'Bearer $ENGAGE_API_KEY'],
    ['x-api-key', '<your tenant API key>'.replace(/ /g, '-')],
    ['x-api-key', '${user_config.api_key}'],
  ])('%s: %s is refused with 401, named for what it is, and never sent to the API', async (header, value) => {
    sandbox.clearLogs();
    const { status, body } = await post({ [header]: value });
    expect(status).toBe(401);
    expect(body).toMatch(
      /a placeholder or a reference to a variable .* that the client did not fill in: put the tenant API key itself in the connector's settings/,
    );
    expect(body).toMatch(/Nothing was sent to the API/);
    expect(body).not.toContain(value.replace(/^Bearer /, ''));
    expect(sandbox.requests()).toEqual([]);
  });

  it('the v1 client cannot connect with it, and a call with the real key still works', async () => {
    const refused = makeClient({ kind: 'v1' });
    const url = new URL('/mcp/contact', service.url);
    await expect(refused.connect(new V1HttpTransport(url, { requestInit: { headers: { authorization: 'Bearer ${ENGAGE_API_KEY}' } } }))).rejects.toThrow(
      /401|did not fill in/,
    );
    const client = makeClient({ kind: 'v1' });
    await client.connect(new V1HttpTransport(url, { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }));
    try {
      const result = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 1 } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(/^contact\.list: records 1–1 of/);
    } finally {
      await client.close();
    }
  });

  it('only a whole placeholder or reference: a key holding $, { or < among other characters is a key', () => {
    for (const value of ['${ENGAGE_API_KEY}', '$ENGAGE_API_KEY', '<key>', '${}']) expect(isUnfilledKey(value), value).toBe(true);
    for (const value of ['eng_live_9f${2c4e}abcdef', 'eng_live_9f<2c4e>abcdef', 'eng_live_$abc', '$1abc']) expect(isUnfilledKey(value), value).toBe(false);
  });
});
