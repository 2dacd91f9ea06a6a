// OAuth end to end with the project's own @modelcontextprotocol/client and its OAuth provider,
// against the sandbox: discovery from the bare 401, registration both ways (a Client ID Metadata
// Document served over https from loopback with a test CA, and DCR), the consent page filled in
// Debian's headless Chromium, tokens, calls in both eras, refresh, revocation, the key revoked at
// the API. And the CIMD SSRF rule: loopback and private addresses are refused without the test seam.
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import {
  StreamableHTTPClientTransport,
  UnauthorizedError,
  auth,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { ALL_SCOPES, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { makeClient, textOf, type TestClient } from './helpers.js';
import { authorizeUrl, openConsent, pkce } from './oauth-helpers.js';
import { makeCertificates } from './redis-server.js';

let sandbox: Sandbox;
let service: Service;
let browser: Browser;
let callback: { server: Server; url: string; next(): Promise<URLSearchParams> };
let cimdHost: { server: Server; url: string };

/** A loopback page the consent redirects to: each request's query is handed to whoever waits. */
async function startCallback(): Promise<typeof callback> {
  const waiting: Array<(params: URLSearchParams) => void> = [];
  const server = createHttpServer((req, res) => {
    res.end('done');
    waiting.shift()?.(new URL(req.url ?? '/', 'http://x').searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { server, url, next: () => new Promise((resolve) => waiting.push(resolve)) };
}

/** The client's metadata document, over https on loopback, signed by a CA of this test's own. */
async function startCimdHost(redirectUri: string): Promise<{ server: Server; url: string; ca: Buffer }> {
  const files = makeCertificates(mkdtempSync(join(tmpdir(), 'engage-cimd-')), 'cimd');
  let url = '';
  const server = createHttpsServer({ cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) }, (_req, res) => {
    const document = { client_id: url, client_name: 'CIMD test client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://localhost:${(server.address() as AddressInfo).port}/client.json`;
  return { server, url, ca: readFileSync(files.caFile) };
}

/** The SDK's OAuth client provider, in memory; the authorization URL it is told to open is kept for the browser. */
class TestProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  saved: OAuthTokens | undefined;
  private client: { client_id: string } | undefined;
  private verifier = '';
  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
  ) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'DCR test client',
      redirect_uris: [this.redirectUrl],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: { client_id: string }) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The person at the consent page: types the key, ticks what is given, allows; the callback's query comes back. */
async function consentInBrowser(url: URL, key: string, tick: string[] = []): Promise<URLSearchParams> {
  const page = await browser.newPage();
  try {
    const arrived = callback.next();
    await page.goto(url.href);
    for (const scope of tick) await page.check(`input[value="${scope}"]`);
    await page.fill('#api_key', key);
    await page.click('button[value="allow"]');
    return await arrived;
  } finally {
    await page.close();
  }
}

/** Connect with the SDK's OAuth flow: the first connect fails with UnauthorizedError, the browser consents, finishAuth, connect again. */
async function connectWithOAuth(provider: TestProvider, path: string, kind: 'v2-legacy' | 'v2-modern', key: string): Promise<TestClient> {
  const url = new URL(path, service.url);
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
  if (!provider.saved) {
    await expect(makeClient({ kind }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const params = await consentInBrowser(provider.authorizationUrl as URL, key);
    expect(params.get('iss')).toBe(service.url);
    await first.finishAuth(params);
  }
  const client = makeClient({ kind });
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
  return client;
}

beforeAll(async () => {
  sandbox = await startSandbox();
  callback = await startCallback();
  const cimd = await startCimdHost(callback.url);
  cimdHost = cimd;
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    oauth: { kek: randomBytes(32), cimd: { allowPrivateAddresses: true, ca: cimd.ca } },
  });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await service?.close();
  await Promise.all([callback, cimdHost].map(({ server }) => new Promise((resolve) => server.close(resolve))));
  await sandbox?.close();
});

describe('the SDK client, end to end', () => {
  it('DCR: discovery from the 401, consent in Chromium, calls in both eras, refresh, then revocation', async () => {
    const provider = new TestProvider(callback.url);
    const legacy = await connectWithOAuth(provider, '/mcp/contact', 'v2-legacy', sandbox.keys.full);
    expect(provider.saved?.access_token).toMatch(/^emcp_at_/);
    const read = await legacy.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
    expect(read.isError, textOf(read)).toBeFalsy();
    const modern = await connectWithOAuth(provider, '/mcp/contact', 'v2-modern', sandbox.keys.full);
    expect((await modern.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } })).isError).toBeFalsy();

    const before = provider.saved as OAuthTokens;
    expect(await auth(provider, { serverUrl: new URL('/mcp/contact', service.url) })).toBe('AUTHORIZED');
    expect(provider.saved?.refresh_token).not.toBe(before.refresh_token);
    expect((await modern.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } })).isError).toBeFalsy();

    const revoked = await fetch(`${service.url}/oauth/revoke`, {
      method: 'POST',
      body: new URLSearchParams({ token: provider.saved?.refresh_token as string, client_id: provider.clientInformation()?.client_id as string }),
    });
    expect(revoked.status).toBe(200);
    await expect(modern.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } })).rejects.toThrow();
    await Promise.allSettled([legacy.close(), modern.close()]);
  }, 60_000);

  it('CIMD: the client_id is its metadata URL; a write scope ticked on the page; the key revoked at the API ends the grant', async () => {
    const key = sandbox.createKey(ALL_SCOPES, { label: 'e2e-cimd' });
    const provider = new TestProvider(callback.url, cimdHost.url);
    const url = new URL('/mcp/campaign', service.url);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(makeClient({ kind: 'v2-modern' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get('client_id')).toBe(cimdHost.url);
    await first.finishAuth(await consentInBrowser(provider.authorizationUrl as URL, key, ['campaign.manage']));
    expect(provider.saved?.scope?.split(' ')).toEqual(expect.arrayContaining(['campaign.read', 'campaign.manage']));
    const client = makeClient({ kind: 'v2-modern' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    expect((await client.callTool({ name: 'campaign_read', arguments: { operationId: 'campaign.list' } })).isError).toBeFalsy();

    sandbox.revokeKey(key);
    const refused = await client.callTool({ name: 'campaign_read', arguments: { operationId: 'campaign.list' } });
    expect(refused.isError).toBe(true);
    // The grant is gone: the token gets 401 and its refresh invalid_grant, so the person must sign in again.
    await expect
      .poll(async () => (await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${provider.saved?.access_token}` } })).status)
      .toBe(401);
    await expect(auth(provider, { serverUrl: url })).rejects.toMatchObject({ code: 'invalid_grant' });
    await client.close();
  }, 60_000);
});

describe('CIMD SSRF limits', () => {
  it('a client_id URL on loopback or a private address is refused when the test seam is off', async () => {
    const strict = await startService({
      env: { ENGAGE_BASE_URL: sandbox.baseUrl },
      catalogs: CATALOGS,
      port: 0,
      writeLog: () => undefined,
      oauth: { kek: randomBytes(32) },
    });
    try {
      for (const clientId of [
        cimdHost.url,
        'https://127.0.0.1:9/client.json',
        'https://10.0.0.7/client.json',
        'https://[::1]:9/c.json',
        'https://169.254.169.254/latest',
      ]) {
        const page = await openConsent(authorizeUrl(strict.url, { clientId, challenge: pkce().challenge, redirectUri: callback.url }));
        expect(page.status, clientId).toBe(400);
        expect(page.html).toMatch(/private|loopback/);
      }
      const plain = await openConsent(
        authorizeUrl(strict.url, { clientId: 'http://example.com/client.json', challenge: pkce().challenge, redirectUri: callback.url }),
      );
      expect(plain.status).toBe(400);
    } finally {
      await strict.close();
    }
  });
});
