// OAuth for remote mode, over real HTTP on loopback against the sandbox: discovery from the bare
// 401, registration, the consent page (posted as a browser would), PKCE, tokens bound to their
// resource, calls with the grant's scopes, refresh with rotation, revocation, the key revoked at
// the API; and the hostile cases. The browser and the SDK's own OAuth client are in oauth-e2e.test.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ALL_SCOPES, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';
import { readHttpSettings } from '../packages/http/src/settings.js';
import { makeClient, structuredOf, textOf, type TestClient, WAIT_UNDER_LOAD } from './helpers.js';
import { REDIRECT, authorizeUrl, mcpStatus, openConsent, pkce, postConsent, register, signIn, tokenRequest } from './oauth-helpers.js';

let sandbox: Sandbox;
let service: Service;
let issuer: string;
let store: MemoryOAuthStore;
const logs: string[] = [];
const open: TestClient[] = [];

async function serve(oauth: Partial<NonNullable<ServiceOptions['oauth']>> = {}): Promise<Service> {
  return startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: (line) => void logs.push(line),
    logLevel: 'debug',
    oauth: { kek: randomBytes(32), store, ...oauth },
  });
}

/** The SDK's client with a Bearer (an access token or a key) on `path`, in the given era. */
async function connect(path: string, bearer: string, kind: 'v2-legacy' | 'v2-modern' = 'v2-modern'): Promise<TestClient> {
  const client = makeClient({ kind });
  await client.connect(new StreamableHTTPClientTransport(new URL(path, issuer), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
  open.push(client);
  return client;
}

beforeAll(async () => {
  sandbox = await startSandbox();
  store = new MemoryOAuthStore();
  service = await serve();
  issuer = service.url;
});
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

describe('discovery', () => {
  it('an unauthenticated POST /mcp gets a bare challenge naming the resource metadata and the read scopes', async () => {
    const { status, challenge } = await mcpStatus(`${issuer}/mcp/contact`);
    expect(status).toBe(401);
    expect(challenge).toBe(`Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp/contact", scope="contact.read"`);
    expect(challenge).not.toContain('error=');
  });

  it('serves the protected resource metadata per path and at the root, and the authorization server metadata', async () => {
    const perPath = (await (await fetch(`${issuer}/.well-known/oauth-protected-resource/mcp/campaign`)).json()) as Record<string, unknown>;
    expect(perPath).toMatchObject({ resource: `${issuer}/mcp/campaign`, authorization_servers: [issuer] });
    expect(perPath.scopes_supported).toEqual(expect.arrayContaining(['campaign.read', 'campaign.send']));
    const root = (await (await fetch(`${issuer}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
    expect(root.resource).toBe(`${issuer}/mcp`);
    const as = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      registration_endpoint: `${issuer}/oauth/register`,
    });
    expect((await fetch(`${issuer}/.well-known/oauth-protected-resource/nowhere`)).status).toBe(404);
  });

  it('a tenant key still works (key mode), as X-API-Key or as a Bearer without our prefix', async () => {
    const client = await connect('/mcp/contact', sandbox.keys.full);
    const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(read.isError, textOf(read)).toBeFalsy();
  });
});

describe('sign-in, calls, refresh and revocation', () => {
  it('a consent with a valid key gives tokens; calls run in both eras with the grant scopes as the allow-list', async () => {
    const tokens = await signIn(issuer, sandbox.keys.full, { resource: `${issuer}/mcp`, scopes: ['contact.read'] });
    expect(tokens.access.startsWith('emcp_at_')).toBe(true);
    expect(tokens.scope).toBe('contact.read');
    for (const kind of ['v2-legacy', 'v2-modern'] as const) {
      const client = await connect('/mcp', tokens.access, kind);
      const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
      expect(read.isError, textOf(read)).toBeFalsy();
      expect(structuredOf(read).operationId).toBe('contact.list');
      // The key has every scope, but the grant only contact.read: no other tool is listed, and a call
      // to one anyway is the SDK's unknown tool (oauth-grant-tools.test.ts: a listed tool's other operations).
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['contact_read']);
      const before = sandbox.requests().length;
      await expect(client.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } })).rejects.toThrow(/Tool tenant_list not found/);
      expect(sandbox.requests().length).toBe(before);
    }
  });

  it('a refresh rotates the pair; the old refresh token used again revokes the grant', async () => {
    const tokens = await signIn(issuer, sandbox.keys.full);
    const fresh = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    expect(fresh.status).toBe(200);
    expect(fresh.body.refresh_token).not.toBe(tokens.refresh);
    expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${fresh.body.access_token as string}`)).status).not.toBe(401);
    // Presented again at once (a holder whose answer was lost): answered once more, with the same new
    // refresh token (review44's reuse interval); a third use is a reuse.
    const again = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(fresh.body.refresh_token);
    const reused = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The whole grant ended: the new access and refresh tokens too.
    expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${fresh.body.access_token as string}`)).status).toBe(401);
    const next = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: fresh.body.refresh_token as string, client_id: tokens.clientId });
    expect(next.status).toBe(400);
  });

  it('revocation (RFC 7009) ends the grant; a token used after it gets 401 invalid_token', async () => {
    const tokens = await signIn(issuer, sandbox.keys.full);
    const client = await connect('/mcp', tokens.access);
    expect((await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } })).isError).toBeFalsy();
    const revoked = await fetch(`${issuer}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ token: tokens.refresh, client_id: tokens.clientId }) });
    expect(revoked.status).toBe(200);
    const after = await mcpStatus(`${issuer}/mcp`, `Bearer ${tokens.access}`);
    expect(after.status).toBe(401);
    expect(after.challenge).toContain('error="invalid_token"');
    expect(after.challenge).toContain(`resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('a key revoked at the API: the next call fails, the grant is revoked, and the token then gets 401 invalid_token', async () => {
    const key = sandbox.createKey(ALL_SCOPES, { label: 'to-revoke' });
    const tokens = await signIn(issuer, key);
    const client = await connect('/mcp', tokens.access);
    expect((await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } })).isError).toBeFalsy();
    sandbox.revokeKey(key);
    const refused = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(refused.isError).toBe(true);
    await expect.poll(async () => (await mcpStatus(`${issuer}/mcp`, `Bearer ${tokens.access}`)).status, WAIT_UNDER_LOAD).toBe(401);
    const refresh = await tokenRequest(issuer, { grant_type: 'refresh_token', refresh_token: tokens.refresh, client_id: tokens.clientId });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('the connections page lists the grants of a key and revokes one', async () => {
    const key = sandbox.createKey(['contact.read'], { label: 'connections' });
    const tokens = await signIn(issuer, key, { scopes: ['contact.read'] });
    const page = await fetch(`${issuer}/oauth/connections`);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const post = (fields: Record<string, string>) =>
      fetch(`${issuer}/oauth/connections`, { method: 'POST', headers: { cookie, origin: issuer }, body: new URLSearchParams({ csrf, ...fields }) });
    const listing = await (await post({ action: 'list', api_key: key })).text();
    expect(listing).toContain('Test client');
    expect(listing).toContain('contact.read');
    expect(listing).not.toContain(key);
    const handle = /name="handle" value="([^"]+)"/.exec(listing)?.[1] as string;
    const grant = /name="grant" value="([^"]+)"/.exec(listing)?.[1] as string;
    expect(await (await post({ action: 'revoke', handle, grant })).text()).toContain('Revoked');
    expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${tokens.access}`)).status).toBe(401);
    // Without the page's cookie, nothing is listed.
    const forged = await fetch(`${issuer}/oauth/connections`, {
      method: 'POST',
      headers: { origin: issuer },
      body: new URLSearchParams({ csrf, action: 'list', api_key: key }),
    });
    expect(forged.status).toBe(403);
  });
});

describe('the consent page', () => {
  it('shows the client, its redirect host with a localhost warning, scopes in plain words (writes unticked), and cannot be framed', async () => {
    const { client_id } = await register(issuer);
    const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge, resource: `${issuer}/mcp/campaign` }));
    expect(page.status).toBe(200);
    expect(page.html).toContain('Test client');
    expect(page.html).toContain('127.0.0.1:9');
    expect(page.html).toContain('this computer');
    expect(page.html).toMatch(/value="campaign.read" checked> See campaigns/);
    expect(page.html).toMatch(/value="campaign.send"> Send campaigns/);
    expect(page.html).toContain('type="password" name="api_key"');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it('a write scope the client asked for is ticked', async () => {
    const { client_id } = await register(issuer);
    const url = authorizeUrl(issuer, {
      clientId: client_id,
      challenge: pkce().challenge,
      resource: `${issuer}/mcp/campaign`,
      scope: 'campaign.read campaign.send',
    });
    expect((await openConsent(url)).html).toMatch(/value="campaign.send" checked>/);
  });

  it('an invalid key is said so, and the request stays open; a key lacking the probed read scope is fine', async () => {
    const { client_id } = await register(issuer);
    const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge }));
    const wrong = await postConsent(issuer, page, { key: 'eng_live_nope', scopes: ['contact.read'] });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('The API refused this key');
    const limited = sandbox.createKey(['contact.read'], { label: 'no-tenant-read' });
    const right = await postConsent(issuer, page, { key: limited, scopes: ['contact.read'] });
    expect(right.status).toBe(303);
    expect(new URL(right.location as string).searchParams.get('iss')).toBe(issuer);
  });
});

describe('hostile', () => {
  it('a wrong or extra redirect URI is never redirected to', async () => {
    const { client_id } = await register(issuer);
    const challenge = pkce().challenge;
    for (const redirectUri of ['https://evil.example/callback', `${REDIRECT}/extra`, `${REDIRECT}?x=1`]) {
      const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge, redirectUri }));
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
    }
    const extra = await fetch(`${issuer}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT, 'http://evil.example/cb'] }),
    });
    expect(extra.status).toBe(400);
    expect(((await extra.json()) as { error: string }).error).toBe('invalid_redirect_uri');
  });

  it('PKCE: a request without S256 goes back with an error; a missing or wrong verifier gets invalid_grant', async () => {
    const { client_id } = await register(issuer);
    const plain = new URL(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge }));
    plain.searchParams.set('code_challenge_method', 'plain');
    const back = await fetch(plain, { redirect: 'manual' });
    expect(new URL(back.headers.get('location') as string).searchParams.get('error')).toBe('invalid_request');
    for (const verifier of [undefined, pkce().verifier]) {
      const { challenge } = pkce();
      const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge }));
      const code = new URL((await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'] })).location as string).searchParams.get(
        'code',
      ) as string;
      const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id, ...(verifier ? { code_verifier: verifier } : {}) };
      expect(await tokenRequest(issuer, fields)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    }
  });

  it('an error before the person saw the page is not a redirect to the web (RFC 9700 §4.11.2): a page links back', async () => {
    const { client_id } = await register(issuer, { client_name: 'Web app', redirect_uris: ['https://app.example/cb'] });
    const wrong = new URL(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge, redirectUri: 'https://app.example/cb', state: 's&1' }));
    wrong.searchParams.set('code_challenge_method', 'plain');
    const answer = await fetch(wrong, { redirect: 'manual' });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
    const html = await answer.text();
    expect(html).toContain('The client that calls itself “Web app” (registered here) sent a sign-in request this server cannot take: PKCE is required');
    const link = /<a href="([^"]*)"/.exec(html)?.[1]?.replaceAll('&#38;', '&') as string;
    const back = new URL(link);
    expect(`${back.origin}${back.pathname}`).toBe('https://app.example/cb');
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'invalid_request', state: 's&1', iss: issuer });
    // A loopback redirect URI (a native app on the person's own machine) is still sent back by itself.
    const { client_id: native } = await register(issuer);
    const local = new URL(authorizeUrl(issuer, { clientId: native, challenge: pkce().challenge }));
    local.searchParams.set('code_challenge_method', 'plain');
    expect((await fetch(local, { redirect: 'manual' })).status).toBe(303);
  });

  it('a code replayed is refused and revokes the tokens the first use gave', async () => {
    const { client_id } = await register(issuer);
    const { verifier, challenge } = pkce();
    const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge }));
    const code = new URL((await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'] })).location as string).searchParams.get(
      'code',
    ) as string;
    const fields = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id, code_verifier: verifier };
    const first = await tokenRequest(issuer, fields);
    expect(first.status).toBe(200);
    expect(await tokenRequest(issuer, fields)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await mcpStatus(`${issuer}/mcp`, `Bearer ${first.body.access_token as string}`)).status).toBe(401);
    // The OAuth route's line is the request's: it carries the request's id.
    const replayed = logs.map((line) => JSON.parse(line) as { msg: string; requestId?: string }).find((line) => /a code was presented twice/.test(line.msg));
    expect(replayed?.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a token for another resource is refused (audience binding)', async () => {
    const tokens = await signIn(issuer, sandbox.keys.full, { resource: `${issuer}/mcp/contact` });
    expect((await mcpStatus(`${issuer}/mcp/contact`, `Bearer ${tokens.access}`)).status).not.toBe(401);
    const elsewhere = await mcpStatus(`${issuer}/mcp/campaign`, `Bearer ${tokens.access}`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.challenge).toContain('error="invalid_token"');
    const { client_id } = await register(issuer);
    const foreign = await fetch(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge, resource: 'https://other.example/mcp' }), {
      redirect: 'manual',
    });
    expect(new URL(foreign.headers.get('location') as string).searchParams.get('error')).toBe('invalid_target');
  });

  it('CSRF: a consent posted without the page cookie, with another csrf token or from another origin is refused', async () => {
    const { client_id } = await register(issuer);
    const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge }));
    const attempts = [{ cookie: 'emcp_consent=forged' }, { csrf: 'forged' }, { origin: 'https://evil.example' }];
    for (const forged of attempts) {
      const answer = await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'], ...forged });
      expect(answer.status).toBe(403);
      expect(answer.location).toBeNull();
    }
    // The request is still usable by the browser it was shown to, once.
    expect((await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'] })).status).toBe(303);
    expect((await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'] })).status).toBe(400);
  });

  it('key mode can be turned off: a tenant key then gets the OAuth challenge', async () => {
    const strict = await serve({ keyMode: false });
    try {
      const { status, challenge } = await mcpStatus(`${strict.url}/mcp`, `Bearer ${sandbox.keys.full}`);
      expect(status).toBe(401);
      expect(challenge).toContain('resource_metadata=');
    } finally {
      await strict.close();
    }
  });

  it('the tenant key is never in the store or the logs in clear, nor any token', async () => {
    const tokens = await signIn(issuer, sandbox.keys.full);
    const dump = JSON.stringify([...(store as unknown as { records: Map<string, unknown> }).records]);
    for (const secret of [sandbox.keys.full, tokens.access, tokens.refresh]) {
      expect(dump).not.toContain(secret);
      expect(logs.join('\n')).not.toContain(secret);
    }
  });
});

describe('settings', () => {
  const kek = randomBytes(32).toString('base64');
  it('ENGAGE_OAUTH_KEK turns OAuth on, with ENGAGE_PUBLIC_URL an https origin (http only on loopback)', () => {
    const on = readHttpSettings({ ENGAGE_OAUTH_KEK: kek, ENGAGE_PUBLIC_URL: 'https://mcp.example.com/' });
    expect(on.ok && on.settings.oauth).toMatchObject({ publicUrl: 'https://mcp.example.com', keyMode: true });
    const none = readHttpSettings({});
    expect(none.ok && none.settings.oauth).toBeUndefined();
    for (const url of [undefined, 'http://mcp.example.com', 'https://mcp.example.com/mcp', 'ftp://x']) {
      expect(readHttpSettings({ ENGAGE_OAUTH_KEK: kek, ...(url ? { ENGAGE_PUBLIC_URL: url } : {}) }).ok, url).toBe(false);
    }
    expect(readHttpSettings({ ENGAGE_OAUTH_KEK: 'short', ENGAGE_PUBLIC_URL: 'https://a.example' }).ok).toBe(false);
    const off = readHttpSettings({ ENGAGE_OAUTH_KEK: kek, ENGAGE_PUBLIC_URL: 'http://127.0.0.1:8787', ENGAGE_OAUTH_KEY_MODE: 'off' });
    expect(off.ok && off.settings.oauth?.keyMode).toBe(false);
  });
});
