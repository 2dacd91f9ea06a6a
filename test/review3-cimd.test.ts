// Review 3: a hostile Client ID Metadata Document server. The fetch has 5 s for the whole
// document: a body trickled a byte at a time, or a connection dropped after the headers, used to
// hold the consent request (and a socket) open for as long as the server liked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { REDIRECT, authorizeUrl, openConsent, pkce } from './oauth-helpers.js';
import { serveOAuth, startMetadataHost } from './review3-helpers.js';

let sandbox: Sandbox;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const documentOf = (url: string) => JSON.stringify({ client_id: url, client_name: 'slow', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });

describe('a hostile client metadata server', () => {
  it('a document trickled a byte every 700 ms is given up after 5 s in all, not 5 s between bytes', async () => {
    const host = await startMetadataHost((url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const timer = setInterval(() => {
        // Twelve spaces (still JSON), then the document: about 9 s in all.
        if (sent++ < 12) res.write(' ');
        else {
          clearInterval(timer);
          res.end(documentOf(url));
        }
      }, 700);
      res.on('close', () => clearInterval(timer));
    });
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true, ca: host.ca } });
    try {
      const started = Date.now();
      const page = await openConsent(authorizeUrl(service.url, { clientId: host.url, challenge: pkce().challenge }));
      expect(page.status).toBe(400);
      expect(page.html).toContain('did not arrive in time');
      expect(Date.now() - started).toBeLessThan(7_000);
    } finally {
      await service.close();
      await host.close();
    }
  }, 20_000);

  it('a connection dropped after the headers is answered at once, not left waiting forever', async () => {
    const host = await startMetadataHost((_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"client_id":');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true, ca: host.ca } });
    try {
      const started = Date.now();
      const page = await openConsent(authorizeUrl(service.url, { clientId: host.url, challenge: pkce().challenge }));
      expect(page.status).toBe(400);
      expect(page.html).toMatch(/cut off|did not arrive in time/);
      expect(Date.now() - started).toBeLessThan(7_000);
    } finally {
      await service.close();
      await host.close();
    }
  }, 20_000);
});
