// review13: registration is open and takes an app's private-use scheme as a redirect URI
// (cursor://, vscode://). The consent page said where the person is sent back with the scheme
// alone, in bold, as it says a web host: `claude.ai:/cb` read "you are sent back to claude.ai"
// (the site, to anyone), and `microsoft-edge:https://evil.example/cb` (a scheme that opens the
// https URL it carries, code and all, in a browser) read "sent back to microsoft-edge", with
// evil.example nowhere on the page. The error page before consent did the same ("back to
// microsoft-edge://"). The page now says it is an app that opens such links, and shows the URI.
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

async function consentFor(redirectUri: string) {
  const { client_id } = await register(service.url, { client_name: 'Claude', redirect_uris: [redirectUri] });
  return { clientId: client_id, page: await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, redirectUri })) };
}

describe('review13: a private-use scheme on the consent page', () => {
  it('a scheme named like a site is not shown as that site', async () => {
    const { page } = await consentFor('claude.ai:/cb');
    expect(page.status).toBe(200);
    expect(page.html).not.toMatch(/sent back to <strong>claude\.ai<\/strong>/);
    expect(page.html).toContain('the app on this computer that opens <code>claude.ai:</code> links');
    expect(page.html).toContain('<code>claude.ai:/cb</code>');
  });

  it('a scheme that carries a web address shows that address', async () => {
    const uri = 'microsoft-edge:https://evil.example/cb';
    const { page } = await consentFor(uri);
    expect(page.html).toContain(`<code>${uri}</code>`);
  });

  it('the URI is shown as parsed: a direction override in it is not shown as one', async () => {
    const { page } = await consentFor('claude.ai:/cb\u202Eelpmaxe.live');
    expect(page.html).not.toContain('\u202E');
    expect(page.html).toContain('<code>claude.ai:/cb%E2%80%AEelpmaxe.live</code>');
  });

  it('the error page before consent names the whole URI its link goes to', async () => {
    const uri = 'microsoft-edge:https://evil.example/cb';
    const { clientId } = await consentFor(uri);
    const url = new URL(authorizeUrl(service.url, { clientId, challenge: pkce().challenge, redirectUri: uri }));
    url.searchParams.set('code_challenge_method', 'plain');
    const answer = await fetch(url, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain(`follow this link back to <strong>${uri}</strong>`);
  });

  it('a web redirect URI is still named by its host', async () => {
    const { page } = await consentFor('https://app.example/cb');
    expect(page.html).toContain('sent back to <strong>app.example</strong>');
  });
});
