// Review 43 (OAuth): a client_id that is a URL was compared with its document's client_id as text,
// but fetched as the URL parser reads it, which drops tabs and newlines, resolves dot segments
// (`/x/../client.json`, `/x/%2e%2e/client.json`), and percent-encodes what a URL may not hold.
// So one document answered for many client_ids, and whoever wrote the document chose the text the
// consent and connections pages show as the client id: dot segments (which the CIMD draft says a
// client_id must not have), or a right-to-left override that shows the rest of the line reversed.
// A client_id URL must now be written as the parser writes it: what is fetched is what is shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { REDIRECT, authorizeUrl, openConsent, pkce } from './oauth-helpers.js';
import { serveOAuth, startMetadataHost } from './review3-helpers.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('review43: a client_id URL not in its normal form', () => {
  it('is refused, though its document names it exactly', async () => {
    // The document names whatever client_id it was asked for (the test sets it before each request).
    let named = '';
    const host = await startMetadataHost((_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: named, client_name: 'Tool', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }));
    });
    const service = await serveOAuth(sandbox, [], { cimd: { allowPrivateAddresses: true, ca: host.ca } });
    const origin = new URL(host.url).origin;
    try {
      for (const clientId of [
        `${origin}/x/../client.json`,
        `${origin}/x/%2e%2e/client.json`,
        `${origin}/client.json\u202Enosj.tneilc/moc.edualc//:sptth`,
        `${origin}/client.json#`,
      ]) {
        named = clientId;
        const page = await openConsent(authorizeUrl(service.url, { clientId, challenge: pkce().challenge }));
        expect(page.status, clientId).toBe(400);
        expect(page.html, clientId).toContain('written in its normal form');
      }
      // The same document under its own URL is taken.
      named = host.url;
      const page = await openConsent(authorizeUrl(service.url, { clientId: host.url, challenge: pkce().challenge }));
      expect(page.status).toBe(200);
    } finally {
      await service.close();
      await host.close();
    }
  });
});
