// review13: registration takes any loopback address as an http redirect URI (127.0.0.0/8,
// clients.ts isLoopbackHost), and an error before consent is sent back to one by itself. The
// consent page's warning ("sends you back to this computer… allow it only if you started the
// connection here yourself") was given only for localhost, 127.0.0.1 and [::1]: a client sending
// the person back to 127.0.0.2 (or 127.1.2.3) got no warning. Every loopback address gets it now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, openConsent, pkce, register } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
let service: Service;

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await serveOAuth(sandbox, []);
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

describe('review13: the consent page and loopback redirect URIs', () => {
  it.each(['http://127.0.0.2:9/cb', 'http://127.1.2.3/cb', 'http://localhost:9/cb', 'http://[::1]:9/cb'])('%s gets the this-computer warning', async (uri) => {
    const { client_id } = await register(service.url, { redirect_uris: [uri] });
    const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, redirectUri: uri }));
    expect(page.status).toBe(200);
    expect(page.html).toContain('This client sends you back to <strong>this computer</strong>');
  });

  it('a web redirect URI gets none', async () => {
    const uri = 'https://app.example/cb';
    const { client_id } = await register(service.url, { redirect_uris: [uri] });
    const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, redirectUri: uri }));
    expect(page.html).not.toContain('this computer');
  });
});
