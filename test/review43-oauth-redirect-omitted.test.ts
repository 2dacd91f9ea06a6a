// Review 43 (OAuth): a client with one registered redirect URI may leave redirect_uri out of its
// authorization request, and the service took that. Its token request may then leave it out too
// (RFC 6749 §4.1.3 and OAuth 2.1: redirect_uri is required there only if the authorization request
// had it), but the code exchange compared the absent value with the URI the code was sent to and
// answered invalid_grant, after spending the code: such a client could never finish a sign-in. A
// request that named the URI must still name it, the same, at the token endpoint.
import { describe, expect, it } from 'vitest';
import { REDIRECT, authorizeUrl, openConsent, pkce, postConsent, register, tokenRequest } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';

let sandbox: Sandbox;
let service: Service;
oauthServicePerFile({}, (started) => {
  ({ sandbox, service } = started);
});

async function codeFor(clientId: string, challenge: string, withRedirect: boolean): Promise<string> {
  const url = new URL(authorizeUrl(service.url, { clientId, challenge }));
  if (!withRedirect) url.searchParams.delete('redirect_uri');
  const page = await openConsent(url.href);
  expect(page.status, page.html).toBe(200);
  const answer = await postConsent(service.url, page, { key: sandbox.keys.full, scopes: ['contact.read'] });
  const back = new URL(answer.location ?? 'http://x/');
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
  return back.searchParams.get('code') ?? '';
}

describe('review43: redirect_uri left out of the authorization request', () => {
  it('may be left out of the token request too', async () => {
    const { client_id } = await register(service.url);
    const { verifier, challenge } = pkce();
    const code = await codeFor(client_id, challenge, false);
    const tokens = await tokenRequest(service.url, { grant_type: 'authorization_code', code, code_verifier: verifier, client_id });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
  });

  it('but one named there must be named, the same, at the token endpoint', async () => {
    const { client_id } = await register(service.url);
    for (const redirectUri of [undefined, 'http://127.0.0.1:9/other']) {
      const { verifier, challenge } = pkce();
      const code = await codeFor(client_id, challenge, true);
      const fields: Record<string, string> = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id };
      if (redirectUri) fields.redirect_uri = redirectUri;
      const tokens = await tokenRequest(service.url, fields);
      expect(tokens.status).toBe(400);
      expect(tokens.body.error).toBe('invalid_grant');
    }
  });

  it('and when it was left out, a token request naming another URI is refused', async () => {
    const { client_id } = await register(service.url);
    const { verifier, challenge } = pkce();
    const code = await codeFor(client_id, challenge, false);
    const tokens = await tokenRequest(service.url, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id,
      redirect_uri: 'http://127.0.0.1:9/other',
    });
    expect(tokens.status).toBe(400);
  });
});
