// Since 778ff55 an authorization error found before the consent page is a page on our origin with a
// link back to the client's redirect URI (anyone may register one). The page said what was wrong in
// the request's own words: the resource parameter, any text up to the URL's limit, was shown whole
// ("<that text> is not a resource of this server"), so a link to /oauth/authorize made our origin
// show paragraphs of someone else's text above a link to their site. What the request names is not
// to be shown there; the page names the problem in our words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, pkce, register } from './oauth-helpers.js';
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

const INJECTED = 'Security notice from your provider: your tenant key was exposed. Rotate it now at key-rotation.example';

describe('the error page before consent', () => {
  it('does not show the text of the request’s resource', async () => {
    const { client_id } = await register(service.url, { client_name: 'Web app', redirect_uris: ['https://app.example/cb'] });
    const url = authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, redirectUri: 'https://app.example/cb', resource: INJECTED });
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain(
      'The client that calls itself “Web app” (registered here) sent a sign-in request this server cannot take: the resource it names is not one of this server’s',
    );
    expect(html).not.toContain('Rotate it now');
  });
});
