// Review 43 (OAuth): what one tenant key may hold. Keys tried on consent pages are limited per
// requester (20 in 10 minutes), but a tenant signing in with its own valid key from many addresses
// (an IPv6 /48 is 65,536 requesters) had no limit at all: each sign-in leaves a grant and a code
// for 10 minutes even if the code is never exchanged, and each exchanged one a grant, its family and
// its tokens for 30 days. In-process, once the store is full (200,000 records), every new record
// pushed out the oldest live one: other tenants' grants and tokens, whose people had to sign in
// again. Now a key may sign in 60 times in 10 minutes from anywhere, and holds at most 1,000 grants:
// a new one ends the key's least recently used (as a key's new session closes its least recently
// used one).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomBytes } from 'node:crypto';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CONSENTS_PER_KEY } from '../packages/http/src/oauth/authorize.js';
import { GRANTS_PER_KEY, Grants } from '../packages/http/src/oauth/grants.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, openConsent, pkce, register } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

describe('review43: grants one key holds', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it(`a key's grant past ${GRANTS_PER_KEY} ends its least recently used; other keys' grants stay`, async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const grants = new Grants(new MemoryOAuthStore(), randomBytes(32));
    const signIn = async (tenantKey: string) => {
      vi.setSystemTime(Date.now() + 1000);
      const grant = await grants.create({ clientId: 'c', clientName: 'C', scopes: ['contact.read'], resource: 'https://mcp.example/mcp', tenantKey });
      const tokens = await grants.issueFirst(grant);
      return { id: grant.id, access: tokens?.access_token as string };
    };
    const other = await signIn('key-of-another-tenant');
    const made = [];
    for (let index = 0; index < GRANTS_PER_KEY; index++) made.push(await signIn('key-signing-in-over-and-over'));
    // The oldest of them was used most recently: the second oldest is the least recently used.
    vi.setSystemTime(Date.now() + 120_000);
    expect(await grants.openAccess(made[0]?.access as string)).toBeDefined();

    const newest = await signIn('key-signing-in-over-and-over');
    const held = await grants.ofKey('key-signing-in-over-and-over');
    expect(held).toHaveLength(GRANTS_PER_KEY);
    expect(held.map((grant) => grant.id)).not.toContain(made[1]?.id);
    expect(await grants.openAccess(made[1]?.access as string)).toBeUndefined();
    for (const kept of [made[0], made[2], newest]) expect(await grants.openAccess(kept?.access as string)).toBeDefined();
    expect(await grants.ofKey('key-of-another-tenant')).toHaveLength(1);
    expect(await grants.openAccess(other.access)).toBeDefined();
  });
});

describe('review43: sign-ins with one key, from many addresses', () => {
  let sandbox: Sandbox;
  let service: Service;
  beforeAll(async () => {
    sandbox = await startSandbox();
    service = await serveOAuth(sandbox, [], { trustedProxyHops: 1 });
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });

  async function consentFrom(forwardedFor: string, clientId: string, key: string): Promise<{ status: number; html: string }> {
    const page = await openConsent(authorizeUrl(service.url, { clientId, challenge: pkce().challenge }));
    const form = new URLSearchParams({ request: page.request, csrf: page.csrf, api_key: key, decision: 'allow', scope: 'contact.read' });
    const response = await fetch(`${service.url}/oauth/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie, origin: service.url, 'x-forwarded-for': forwardedFor },
      body: form,
    });
    return { status: response.status, html: await response.text() };
  }

  it(`are ${CONSENTS_PER_KEY} in 10 minutes; another key is not held back`, async () => {
    const { client_id } = await register(service.url);
    for (let index = 0; index < CONSENTS_PER_KEY; index++) {
      expect((await consentFrom(`2001:db8:0:${index.toString(16)}::1`, client_id, sandbox.keys.full)).status).toBe(303);
    }
    const refused = await consentFrom('2001:db8:0:ff::1', client_id, sandbox.keys.full);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(`This key was used to sign in more than ${CONSENTS_PER_KEY} times in the last 10 minutes`);
    const otherKey = sandbox.keys.otherTenant;
    expect((await consentFrom('2001:db8:0:ff::1', client_id, otherKey)).status).toBe(303);
  });
});
