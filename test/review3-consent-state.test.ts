// Review 3: what an unauthenticated caller can make the service keep. Every GET /oauth/authorize
// used to store its consent request for 10 minutes (with a state of any length), and a listing of
// connections with any made-up key stored a handle: a flood grew the process's memory or Redis
// without bound, and the in-process store, full, dropped its oldest records first: other tenants'
// grants and tokens. Now the request travels sealed in its own page, and nothing is stored until a
// key the API accepts is entered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { REDIRECT, authorizeUrl, openConsent, pkce, postConsent, register } from './oauth-helpers.js';
import { WatchedStore, serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('state kept for callers nobody has authenticated', () => {
  it('opening consent pages, declining and posting made-up keys store nothing but the count of keys from that requester', async () => {
    const store = new WatchedStore();
    const service = await serveOAuth(sandbox, logs, { store });
    try {
      const issuer = service.url;
      const { client_id } = await register(issuer);
      store.writes = [];
      // A flood of consent pages, some with a 12 KB state: each used to be a record kept 10 minutes.
      const pages = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          openConsent(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge, state: 's'.repeat(index % 2 ? 12_000 : 40) })),
        ),
      );
      expect(pages.every((page) => page.status === 200 || page.status === 303)).toBe(true);
      const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge: pkce().challenge }));
      expect(page.status).toBe(200);
      expect((await postConsent(issuer, page, { key: 'eng_live_made_up', scopes: ['contact.read'] })).status).toBe(400);
      expect((await postConsent(issuer, page, { key: '', scopes: ['contact.read'], decision: 'deny' })).status).toBe(303);
      const connections = await fetch(`${issuer}/oauth/connections`);
      const csrf = /name="csrf" value="([^"]+)"/.exec(await connections.text())?.[1] as string;
      const cookie = (connections.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const listed = await fetch(`${issuer}/oauth/connections`, {
        method: 'POST',
        headers: { cookie, origin: issuer },
        body: new URLSearchParams({ csrf, action: 'list', api_key: 'eng_live_made_up' }),
      });
      expect(listed.status).toBe(200);
      expect(await listed.text()).toContain('No connections were made with this key.');
      // Only the count of keys entered from this address (one record per requester, 10 minutes),
      // counted by the consent page and by the connections page (review13).
      expect(store.writes).toEqual(['keytries:127.0.0.1', 'keytries:127.0.0.1']);
    } finally {
      await service.close();
    }
  });

  it('a state longer than 2048 characters goes back to the client as invalid_request', async () => {
    const service = await serveOAuth(sandbox, logs);
    try {
      const { client_id } = await register(service.url);
      const answer = await fetch(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, state: 's'.repeat(2049) }), {
        redirect: 'manual',
      });
      expect(answer.status).toBe(303);
      expect(new URL(answer.headers.get('location') as string).searchParams.get('error')).toBe('invalid_request');
    } finally {
      await service.close();
    }
  });

  it('the consent request still works end to end, once, and only in the browser it was shown to', async () => {
    const service = await serveOAuth(sandbox, logs);
    try {
      const issuer = service.url;
      const { client_id } = await register(issuer);
      const { challenge } = pkce();
      const page = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge, state: 'k'.repeat(2048) }));
      const other = await openConsent(authorizeUrl(issuer, { clientId: client_id, challenge }));
      // Another page's cookie does not carry this request.
      expect((await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'], cookie: other.cookie })).status).toBe(403);
      // A tampered request is refused.
      const tampered = { ...page, request: `${page.request.slice(0, -4)}AAAA` };
      expect((await postConsent(issuer, tampered, { key: sandbox.keys.full, scopes: ['contact.read'] })).status).toBe(400);
      // One from another service (another KEK) is refused.
      const elsewhere = await serveOAuth(sandbox, logs);
      try {
        const foreign = await openConsent(authorizeUrl(elsewhere.url, { clientId: (await register(elsewhere.url)).client_id, challenge }));
        expect((await postConsent(issuer, { ...page, request: foreign.request }, { key: sandbox.keys.full, scopes: ['contact.read'] })).status).toBe(400);
      } finally {
        await elsewhere.close();
      }
      const allowed = await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'] });
      expect(allowed.status).toBe(303);
      const back = new URL(allowed.location as string);
      expect(back.searchParams.get('state')).toBe('k'.repeat(2048));
      expect(back.origin + back.pathname).toBe(REDIRECT);
      expect((await postConsent(issuer, page, { key: sandbox.keys.full, scopes: ['contact.read'] })).status).toBe(400);
      expect((await postConsent(issuer, page, { key: '', scopes: [], decision: 'deny' })).status).toBe(400);
    } finally {
      await service.close();
    }
  });
});
