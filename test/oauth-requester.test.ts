// Registrations are limited per requester. Behind a TLS proxy every request comes from the proxy,
// so with ENGAGE_TRUSTED_PROXY_HOPS the address the proxy saw (X-Forwarded-For, from the right)
// counts instead; without it the header is ignored, so a caller cannot choose its own bucket.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { addressGroup, requesterOf } from '../packages/http/src/oauth/requester.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { readHttpSettings } from '../packages/http/src/settings.js';
import { REDIRECT, authorizeUrl, openConsent, pkce, register } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

const request = (remoteAddress: string, forwarded?: string | string[]) =>
  ({ socket: { remoteAddress }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as Parameters<typeof requesterOf>[0];

describe('requesterOf', () => {
  it('is the socket address without trusted proxies, whatever X-Forwarded-For says', () => {
    expect(requesterOf(request('203.0.113.9', '198.51.100.1'), 0)).toBe('203.0.113.9');
  });

  it("with one trusted proxy, is the last address it wrote; earlier entries (the caller's own) are not trusted", () => {
    expect(requesterOf(request('10.0.0.2', '198.51.100.7, 192.0.2.44'), 1)).toBe('192.0.2.44');
    expect(requesterOf(request('10.0.0.2', ['198.51.100.7', '192.0.2.44']), 1)).toBe('192.0.2.44');
    expect(requesterOf(request('10.0.0.3', '192.0.2.44, 10.0.0.2'), 2)).toBe('192.0.2.44');
  });

  it('reads an address a proxy wrote with its port, or an IPv6 one in brackets', () => {
    expect(requesterOf(request('10.0.0.2', '192.0.2.44:5555'), 1)).toBe('192.0.2.44');
    expect(requesterOf(request('10.0.0.2', '[2001:db8:1:2::9]:443'), 1)).toBe('2001:db8:1:2::/64');
    expect(requesterOf(request('10.0.0.2', '[2001:db8:1:2::9]'), 1)).toBe('2001:db8:1:2::/64');
  });

  it('stops at the nearest hop that wrote no usable address, and at the socket when there is no header', () => {
    expect(requesterOf(request('10.0.0.2', 'unknown'), 1)).toBe('10.0.0.2');
    expect(requesterOf(request('10.0.0.2'), 1)).toBe('10.0.0.2');
    expect(requesterOf(request('10.0.0.3', '192.0.2.44, garbage'), 2)).toBe('10.0.0.3');
  });

  it('groups IPv6 by /64 and unwraps IPv4-mapped addresses', () => {
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('::1')).toBe('0:0:0:0::/64');
    expect(addressGroup('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressGroup('not an address')).toBe('unknown');
  });

  it('is read from ENGAGE_TRUSTED_PROXY_HOPS, and a bad value refuses the start', () => {
    const env = { ENGAGE_OAUTH_KEK: randomBytes(32).toString('base64'), ENGAGE_PUBLIC_URL: 'https://mcp.example.com' };
    const good = readHttpSettings({ ...env, ENGAGE_TRUSTED_PROXY_HOPS: '1' });
    expect(good.ok && good.settings.oauth?.trustedProxyHops).toBe(1);
    const bad = readHttpSettings({ ...env, ENGAGE_TRUSTED_PROXY_HOPS: 'yes' });
    expect(bad.ok).toBe(false);
  });
});

describe('registrations behind a proxy', () => {
  let sandbox: Sandbox;
  const services: Service[] = [];
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.close()));
    await sandbox.close();
  });

  async function serve(trustedProxyHops: number): Promise<string> {
    const service = await startService({
      env: { ENGAGE_BASE_URL: sandbox.baseUrl },
      catalogs: CATALOGS,
      port: 0,
      writeLog: () => undefined,
      oauth: { kek: randomBytes(32), store: new MemoryOAuthStore(), trustedProxyHops },
    });
    services.push(service);
    return service.url;
  }
  const registerAs = (issuer: string, forwardedFor: string) =>
    fetch(`${issuer}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
      body: JSON.stringify({ client_name: 'Test', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    }).then((response) => response.status);

  it('with a trusted proxy, one caller using up its allowance leaves the others theirs', async () => {
    const issuer = await serve(1);
    const greedy: number[] = [];
    for (let index = 0; index < 25; index++) greedy.push(await registerAs(issuer, '192.0.2.10'));
    expect(greedy.filter((status) => status === 201)).toHaveLength(20);
    expect(greedy.at(-1)).toBe(429);
    expect(await registerAs(issuer, '192.0.2.11')).toBe(201);
    // The caller's own entries before the proxy's are not believed.
    expect(await registerAs(issuer, '192.0.2.99, 192.0.2.10')).toBe(429);
  });

  it('without one, X-Forwarded-For is ignored: the socket address is the requester', async () => {
    const issuer = await serve(0);
    const statuses: number[] = [];
    for (let index = 0; index < 25; index++) statuses.push(await registerAs(issuer, `192.0.2.${index}`));
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('keys tried on consent pages, per requester', () => {
  let sandbox: Sandbox;
  let issuer: string;
  let clientId: string;
  let service: Service;
  beforeAll(async () => {
    sandbox = await startSandbox();
    service = await serveOAuth(sandbox, [], { trustedProxyHops: 1 });
    issuer = service.url;
    clientId = (await register(issuer)).client_id;
  });
  afterAll(async () => {
    await service.close();
    await sandbox.close();
  });

  async function consentAs(forwardedFor: string, key: string): Promise<{ status: number; html: string }> {
    const page = await openConsent(authorizeUrl(issuer, { clientId, challenge: pkce().challenge }));
    const form = new URLSearchParams({ request: page.request, csrf: page.csrf, api_key: key, decision: 'allow', scope: 'contact.read' });
    const response = await fetch(`${issuer}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie, origin: issuer, 'x-forwarded-for': forwardedFor },
      body: form,
    });
    return { status: response.status, html: await response.text() };
  }

  it('after 20 keys from one requester the next is not checked, even a good one; another requester is not held back', async () => {
    for (let index = 0; index < 20; index++) expect((await consentAs('192.0.2.20', `eng_live_guess_${index}`)).html).toContain('The API refused this key');
    const before = sandbox.requests().length;
    const refused = await consentAs('192.0.2.20', sandbox.keys.full);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('More than 20 keys were entered from this network in the last 10 minutes');
    expect(sandbox.requests().length).toBe(before);
    expect((await consentAs('192.0.2.21', sandbox.keys.full)).status).toBe(303);
  });
});
