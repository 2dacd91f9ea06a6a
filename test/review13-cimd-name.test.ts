// review13: a client metadata document names its client freely, and the consent page showed that
// name in bold ("Claude asks to use your tenant's messaging API…") with the document's address only
// in the small print at the bottom. The address is the one thing about such a client the service
// has checked (the document came over https from that host), so a document on evil.example named
// "Claude" read as Claude. The page now names the host the document came from beside the name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { REDIRECT, authorizeUrl, openConsent, pkce, register } from './oauth-helpers.js';
import { serveOAuth, startMetadataHost } from './review3-helpers.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('review13: the name a client metadata document gives itself', () => {
  it('is shown with the host that published it', async () => {
    const host = await startMetadataHost((url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: url, client_name: 'Claude', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }));
    });
    const service = await serveOAuth(sandbox, [], { cimd: { allowPrivateAddresses: true, ca: host.ca } });
    try {
      const page = await openConsent(authorizeUrl(service.url, { clientId: host.url, challenge: pkce().challenge }));
      expect(page.status).toBe(200);
      const first = /<p>(.*?)<\/p>/.exec(page.html)?.[1] ?? '';
      expect(first).toContain(`<strong>Claude</strong> (described by <strong>${new URL(host.url).host}</strong>)`);

      // A registered client has no such host: its name is one it gave itself (review44).
      const { client_id } = await register(service.url);
      const registered = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge }));
      expect(/<p>(.*?)<\/p>/.exec(registered.html)?.[1]).toMatch(/^A client that calls itself “<strong>Test client<\/strong>”, registered here, asks to use/);
    } finally {
      await service.close();
      await host.close();
    }
  });
});
