// 2025 sessions of keys the API has not accepted yet share their own places (1,000 by default): a new
// one closed the least recently used idle one of them. Right after a deploy every tenant is among
// them, and a tenant's session sits idle from its initialize to its first call (the person is still
// typing): one client opening sessions of made-up keys (an initialize costs nothing upstream) closed
// it, and its first call was answered 404 session not found, for as long as that went on. A full
// pool now gives up a session of the client address holding the most of them: a flood pushes out
// its own.
import { request } from 'node:http';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { makeClient, textOf } from './helpers.js';
import { servicePerFile } from './helpers/service-per-file.js';

const file = servicePerFile({ maxUnacceptedSessions: 3 });

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '0' } },
});

/** A made-up key's initialize from another local address (127.0.0.2): the session id it was given. */
function openFromElsewhere(index: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/mcp/contact', file.service.url), {
      method: 'POST',
      localAddress: '127.0.0.2',
      headers: {
        authorization: `Bearer made-up-session-key-${index}-0123456789abcdef`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    });
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve(res.headers['mcp-session-id'] as string | undefined));
    });
    req.once('error', reject);
    req.end(INITIALIZE);
  });
}

describe('a 2025 session of a key this replica has not seen accepted', () => {
  it("is not pushed out by another address's sessions of made-up keys", async () => {
    const tenant = makeClient({ kind: 'v1' });
    file.closeAfter(tenant);
    const key = file.sandbox.createKey(['contact.read']);
    await tenant.connect(new V1HttpTransport(new URL('/mcp/contact', file.service.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    for (let index = 0; index < 6; index++) expect(await openFromElsewhere(index)).toBeTruthy();
    // Before, this was 404 session not found: the flood's sessions had closed the tenant's.
    const read = await tenant.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(read.isError, textOf(read)).toBeFalsy();
  });
});
