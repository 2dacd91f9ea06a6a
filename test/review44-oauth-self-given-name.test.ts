// Review 44: the consent and connections pages show a client described by a metadata document as
// its name and "described by <host>" (review13), the host being what the service checked. A client
// registered here (RFC 7591) names itself as it likes, and was shown as that name in bold like any
// other: one named "Claude (described by claude.ai)" read exactly as a metadata-document client of
// claude.ai. A registered client's name is now shown as one it gave itself ("a client that calls
// itself “…”, registered here"), never in the form of the metadata-document line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { authorizeUrl, openConsent, pkce, register, signIn } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

const IMITATION = 'Claude (described by claude.ai)';
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

/** The name's rendering as the pages escape it. */
const escaped = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

describe('a registered client naming itself like a metadata-document client', () => {
  it('is shown on the consent page as a name it gave itself, registered here', async () => {
    const { client_id } = await register(service.url, { client_name: IMITATION });
    const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge }));
    const first = /<p>(.*?)<\/p>/.exec(page.html)?.[1] ?? '';
    expect(first).not.toMatch(/^<strong>/);
    expect(first.split(' asks to use')[0]).toBe(`A client that calls itself “<strong>${escaped(IMITATION)}</strong>”, registered here,`);
  });

  it('is shown so on the error page of a request the service cannot take', async () => {
    const { client_id } = await register(service.url, { client_name: IMITATION, redirect_uris: ['https://app.example/cb'] });
    const url = authorizeUrl(service.url, {
      clientId: client_id,
      challenge: pkce().challenge,
      redirectUri: 'https://app.example/cb',
      resource: 'https://elsewhere.example/mcp',
    });
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain(`The client that calls itself “${escaped(IMITATION)}” (registered here) sent a sign-in request this server cannot take`);
    expect(html).not.toContain(`>${escaped(IMITATION)} sent a sign-in request`);
  });

  it('is shown so on the connections page too', async () => {
    const { client_id } = await register(service.url, { client_name: IMITATION });
    const key = sandbox.createKey(['contact.read', 'tenant.read'], { label: 'self-named' });
    await signIn(service.url, key, { clientId: client_id });
    const form = await fetch(`${service.url}/oauth/connections`);
    const csrf = /name="csrf" value="([^"]*)"/.exec(await form.text())?.[1] ?? '';
    const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const listed = await fetch(`${service.url}/oauth/connections`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: service.url },
      body: new URLSearchParams({ csrf, action: 'list', api_key: key }),
    }).then((answer) => answer.text());
    const row = /<tr><td>(.*?)<\/td>/.exec(listed.slice(listed.indexOf('</th></tr>')))?.[1] ?? '';
    expect(row).toContain(`calls itself “<strong>${escaped(IMITATION)}</strong>”, registered here`);
    expect(row).toContain(client_id);
  });
});
