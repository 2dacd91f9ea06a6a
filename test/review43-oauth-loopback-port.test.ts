// Review 43 (OAuth): a native app's redirect URI on a loopback address names no port when the app
// takes whatever port the system gives it at each sign-in (RFC 8252 §7.3: the authorization server
// MUST allow any port in the request for a loopback redirect URI). Client metadata documents are
// written so: a document listing http://127.0.0.1/callback, with the app listening on
// http://127.0.0.1:53123/callback, was refused ("not one this client registered"), so such a CLI
// could not sign in here at all. The port of a loopback redirect URI is now free; its scheme, host,
// path and query are matched exactly, and any other redirect URI is matched whole, as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, openConsent, pkce, postConsent, register, tokenRequest } from './oauth-helpers.js';
import { serveOAuth, startMetadataHost } from './review3-helpers.js';

let sandbox: Sandbox;
let service: Service;
let metadataHost: Awaited<ReturnType<typeof startMetadataHost>>;

beforeAll(async () => {
  sandbox = await startSandbox();
  metadataHost = await startMetadataHost((url, _req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ client_id: url, client_name: 'CLI', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }));
  });
  service = await serveOAuth(sandbox, [], { cimd: { allowPrivateAddresses: true, ca: metadataHost.ca } });
});
afterAll(async () => {
  await service?.close();
  await metadataHost?.close();
  await sandbox?.close();
});

const consentFor = (clientId: string, redirectUri: string) => openConsent(authorizeUrl(service.url, { clientId, challenge: pkce().challenge, redirectUri }));

describe('review43: a loopback redirect URI registered without a port', () => {
  it('a client metadata document’s http://127.0.0.1/callback takes the port the app listens on, through to the tokens', async () => {
    const { verifier, challenge } = pkce();
    const redirectUri = 'http://127.0.0.1:53123/callback';
    const page = await openConsent(authorizeUrl(service.url, { clientId: metadataHost.url, challenge, redirectUri }));
    expect(page.status, page.html).toBe(200);
    const answer = await postConsent(service.url, page, { key: sandbox.keys.full, scopes: ['contact.read'] });
    const back = new URL(answer.location ?? 'http://x/');
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    const code = back.searchParams.get('code') ?? '';
    const tokens = await tokenRequest(service.url, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: metadataHost.url,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
  });

  it('so does a registration’s, and [::1] and localhost alike', async () => {
    const { client_id } = await register(service.url, { redirect_uris: ['http://127.0.0.1/cb', 'http://[::1]/cb', 'http://localhost/cb?app=1'] });
    for (const redirectUri of ['http://127.0.0.1:40001/cb', 'http://[::1]:40002/cb', 'http://localhost:40003/cb?app=1']) {
      expect((await consentFor(client_id, redirectUri)).status, redirectUri).toBe(200);
    }
  });

  it('only the port is free: another host, path, query or scheme is still refused, and a web redirect URI is matched whole', async () => {
    const { client_id } = await register(service.url, { redirect_uris: ['http://127.0.0.1/cb', 'https://app.example/cb'] });
    for (const redirectUri of [
      'http://127.0.0.2:40001/cb',
      'http://localhost:40001/cb',
      'http://127.0.0.1:40001/cb/',
      'http://127.0.0.1:40001/cb?x=1',
      'http://127.0.0.1:40001/other',
      'http://user@127.0.0.1:40001/cb',
      'https://127.0.0.1:40001/cb',
      'https://app.example:8443/cb',
    ]) {
      const page = await consentFor(client_id, redirectUri);
      expect(page.status, redirectUri).toBe(400);
      expect(page.html, redirectUri).toContain('The redirect URI is not one this client registered.');
    }
  });
});
