// Review 22b: the Host header is one of ours only as a host and port. The SDK's Node adapter builds
// the request's URL as `http://<Host><path>`, and the MCP face picks the endpoint from that URL's
// path, while the route, audience and concurrency checks read the request line's path. Before, the
// Host guard read only the host name out of the header (`new URL('http://' + host).hostname`), so a
// Host of `127.0.0.1:<port>/mcp/tenant?` passed it: a POST to /mcp/contact was served by
// /mcp/tenant (an OAuth access token for /mcp/contact then reached another resource's tools,
// its audience checked against the path it never served), and `evil@127.0.0.1` or `127.0.0.1#x`
// made every request a 500 "Internal error" with a warning logged.
import { request } from 'node:http';
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { signIn } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({}, (ready) => ({ sandbox, service } = ready));

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
});

/** A 2025 initialize POSTed to `path` with this Host header (fetch cannot set one). */
function initialize(path: string, host: string, authorization: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { host, authorization, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(INITIALIZE);
  });
}

it('a Host that carries a path does not move a request to another endpoint (nor an access token to another resource)', async () => {
  const { port } = new URL(service.url);
  const { access } = await signIn(service.url, sandbox.keys.full, { resource: `${service.url}/mcp/contact`, scopes: ['contact.read'] });
  const plain = await initialize('/mcp/contact', `127.0.0.1:${port}`, `Bearer ${access}`);
  expect(plain.status).toBe(200);
  expect(plain.body).toContain('engage-mcp-contact');
  for (const host of [`127.0.0.1:${port}/mcp/tenant?`, `127.0.0.1:${port}/mcp?`]) {
    for (const authorization of [`Bearer ${access}`, `Bearer ${sandbox.keys.full}`]) {
      const moved = await initialize('/mcp/contact', host, authorization);
      expect(moved.body, host).not.toMatch(/engage-mcp-tenant|"engage-mcp"/);
      expect(moved.status, host).toBe(403);
    }
  }
});

it('a Host with credentials, a query or a fragment is refused as a Host, not answered 500', async () => {
  const { port } = new URL(service.url);
  for (const host of [`evil@127.0.0.1:${port}`, `127.0.0.1:${port}#x`, `127.0.0.1?x`, `127.0.0.1:${port}\\x`]) {
    const answer = await initialize('/mcp/contact', host, `Bearer ${sandbox.keys.full}`);
    expect(answer.status, host).toBe(403);
    expect(answer.body, host).toContain('forbidden_host');
  }
});
