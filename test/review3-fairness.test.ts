// Review 3: the consent page's key check is an upstream request like any other, so it takes the
// key's upstream slots (fairness.ts). It used to go straight to the shared pool of 16 connections:
// anyone could open a consent page and post made-up keys, and while the API was slow to refuse
// them, every tenant's calls queued behind those checks.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, textOf } from './helpers.js';
import { authorizeUrl, openConsent, pkce, postConsent, register } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

/** In front of the sandbox: requests with a made-up key (eng_live_bogus…) are held until released, then refused 401; the rest pass. */
async function startSlowToRefuse(target: string): Promise<{ server: Server; url: string; held(): number; release(): void }> {
  const held: ServerResponse[] = [];
  const refuse = (res: ServerResponse) => {
    const body = JSON.stringify({ status: 401, errorCode: 40100, message: 'invalid API key', data: null });
    res.writeHead(401, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  };
  let released = false;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const presented = String(req.headers['x-api-key'] ?? req.headers.authorization ?? '');
    if (presented.includes('eng_live_bogus')) {
      if (released) return refuse(res);
      held.push(res);
      return;
    }
    const upstream = httpRequest(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held.length,
    release: () => {
      released = true;
      for (const res of held.splice(0)) refuse(res);
    },
  };
}

describe('fairness of the consent key check', () => {
  it('made-up keys posted on a consent page, slow to be refused, do not hold up another tenant', async () => {
    const api = await startSlowToRefuse(sandbox.baseUrl);
    const service = await serveOAuth(sandbox, logs, {}, { env: { ENGAGE_BASE_URL: api.url } });
    const client = makeClient({ kind: 'v2-modern' });
    try {
      const issuer = service.url;
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp/contact', issuer), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }),
      );
      const call = () => client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
      expect((await call()).isError).toBeFalsy(); // the tenant's key is known to the API
      const { client_id } = await register(issuer);
      const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge }));
      const guesses = Array.from({ length: 24 }, (_, index) =>
        postConsent(issuer, page, { key: `eng_live_bogus_${index}`, scopes: ['contact.read'] }).catch((error: unknown) => ({
          status: 0,
          location: null,
          html: String(error),
        })),
      );
      await expect.poll(() => api.held(), { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The tenant's call is answered while the guesses are still held (it would wait for them otherwise).
      // Held guesses never answer until released, so a call that waited for them would be 'late'; 15 s, not 3, leaves a loaded machine its own slowness.
      const read = await Promise.race([call(), new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 15_000))]);
      api.release();
      expect(read).not.toBe('late');
      expect((read as Awaited<ReturnType<typeof call>>).isError, textOf(read as Awaited<ReturnType<typeof call>>)).toBeFalsy();
      // Every guess is refused: 20 are checked (and told the API refused them), the rest not even sent.
      const answers = (await Promise.all(guesses)).map((guess) => guess.html);
      expect(answers.filter((html) => html.includes('The API refused this key'))).toHaveLength(20);
      expect(answers.filter((html) => html.includes('More than 20 keys were entered from this network'))).toHaveLength(4);
    } finally {
      api.release();
      await client.close().catch(() => undefined);
      await service.close();
      api.server.closeAllConnections();
      await new Promise((resolve) => api.server.close(resolve));
    }
  }, 60_000);
});
