// The access log line of every request under /mcp carries the request's path as it came
// (service.ts: `path: req.url.split('?')[0]`), in a field that no redaction touches (log.ts
// passes only `msg` through logSafe). The query is cut off, but a path is not: a host configured
// with the key in the URL's path (`https://mcp.example.com/mcp/<key>`, the shape some connector
// UIs suggest) has the key written whole into the log on every request, even when the same key
// also came in X-API-Key and the service therefore knew it. The metrics already fold unknown
// paths into "other"; now the log does too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { envelope, HOSTILE_KEY, startHostileApi, type HostileApi } from './hostile-api.js';
import { keyScanner } from './leaks.js';

let api: HostileApi;
let service: Service;
const logs: string[] = [];

beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([]));
  service = await startService({ env: { ENGAGE_BASE_URL: api.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: (line) => void logs.push(line) });
});
afterAll(async () => {
  await service?.close();
  await api?.close();
});

describe('the access log', () => {
  it.each([`/mcp/${HOSTILE_KEY}`, `/mcp/contact/${HOSTILE_KEY}`, `/mcp${HOSTILE_KEY}`])('never holds the key a path carried: %s', async (path) => {
    const response = await fetch(new URL(path, service.url), {
      method: 'POST',
      headers: { 'x-api-key': HOSTILE_KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(404);
    const accessLine = () => logs.find((each) => each.includes('"msg":"request"') && each.includes('"status":404'));
    while (!accessLine()) await new Promise((resolve) => setTimeout(resolve, 10)); // written when the response closes
    expect(accessLine()).toContain('"path":"other"');
    expect(keyScanner(HOSTILE_KEY).find(logs.join('\n'))).toBeUndefined();
    logs.length = 0;
  });

  it('names an endpoint asked for with a trailing slash as the endpoint it was served by', async () => {
    const response = await fetch(new URL('/mcp/contact/', service.url), {
      method: 'POST',
      headers: { 'x-api-key': HOSTILE_KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    await response.text();
    const accessLine = () => logs.find((each) => each.includes('"msg":"request"'));
    while (!accessLine()) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(response.status, accessLine()).not.toBe(404);
    expect(accessLine()).toContain('"path":"/mcp/contact"');
    logs.length = 0;
  });
});
