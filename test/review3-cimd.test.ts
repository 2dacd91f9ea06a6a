// Review 3: a hostile Client ID Metadata Document server. The fetch has 5 s for the whole
// document: a body trickled a byte at a time, or a connection dropped after the headers, used to
// hold the consent request (and a socket) open for as long as the server liked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { WAIT_UNDER_LOAD } from './helpers.js';
import { REDIRECT, authorizeUrl, openConsent, pkce } from './oauth-helpers.js';
import { serveOAuth, startMetadataHost } from './review3-helpers.js';

let sandbox: Sandbox;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const documentOf = (url: string) => JSON.stringify({ client_id: url, client_name: 'slow', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });

describe('a hostile client metadata server', () => {
  it('a document trickled a byte every 700 ms is given up after 5 s in all, not 5 s between bytes', async () => {
    const host = await startMetadataHost((url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const timer = setInterval(() => {
        // Twelve spaces (still JSON), then the document: about 9 s in all.
        if (sent++ < 12) res.write(' ');
        else {
          clearInterval(timer);
          res.end(documentOf(url));
        }
      }, 700);
      res.on('close', () => clearInterval(timer));
    });
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true, ca: host.ca } });
    try {
      // Whole, the document would arrive after about 9 s and make a consent page (200).
      const page = await openConsent(authorizeUrl(service.url, { clientId: host.url, challenge: pkce().challenge }));
      expect(page.status).toBe(400);
      expect(page.html).toContain('did not arrive in time');
    } finally {
      await service.close();
      await host.close();
    }
  }, 20_000);

  it('a connection dropped after the headers is answered at once, not left waiting forever', async () => {
    const host = await startMetadataHost((_url, _req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"client_id":');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true, ca: host.ca } });
    try {
      // Left waiting, the page would never come and the test would time out.
      const page = await openConsent(authorizeUrl(service.url, { clientId: host.url, challenge: pkce().challenge }));
      expect(page.status).toBe(400);
      expect(page.html).toMatch(/cut off|did not arrive in time/);
    } finally {
      await service.close();
      await host.close();
    }
  }, 20_000);

  it('identical fetches share one, and at most 8 run at once across all callers', async () => {
    const seen: string[] = [];
    const held: Array<() => void> = [];
    const host = await startMetadataHost((url, req, res) => {
      seen.push(req.url ?? '');
      held.push(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(documentOf(`${new URL(url).origin}${req.url}`));
      });
    });
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true, ca: host.ca }, trustedProxyHops: 1 });
    const origin = new URL(host.url).origin;
    // Each requester (the address the proxy saw) may hold two fetches: these come from several.
    const from = (index: number) => ({ 'x-forwarded-for': `192.0.2.${index}` });
    const open = (path: string, requester: number) =>
      openConsent(authorizeUrl(service.url, { clientId: `${origin}${path}`, challenge: pkce().challenge }), from(requester));
    try {
      const same = Array.from({ length: 5 }, () => open('/same.json', 100));
      await expect.poll(() => seen.length, WAIT_UNDER_LOAD).toBe(1);
      const others = Array.from({ length: 12 }, (_, index) => open(`/client-${index}.json`, Math.floor(index / 2)));
      const pages = [...same, ...others];
      await expect.poll(() => seen.length, WAIT_UNDER_LOAD).toBe(8);
      // While 8 are in flight, a ninth distinct document is refused at once, not fetched.
      const refused = await open('/one-more.json', 50);
      expect(refused.status).toBe(400);
      expect(refused.html).toContain('try again in a moment');
      expect(seen.filter((path) => path === '/same.json')).toHaveLength(1);
      for (const release of held) release();
      const statuses = (await Promise.all(pages)).map((page) => page.status);
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(8);
      expect(seen.length).toBe(8);
    } finally {
      await service.close();
      await host.close();
    }
  }, 20_000);

  it('one requester holds at most two fetches: a third is refused, another requester is still served', async () => {
    const held: Array<() => void> = [];
    const host = await startMetadataHost((url, req, res) => {
      held.push(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(documentOf(`${new URL(url).origin}${req.url}`));
      });
    });
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true, ca: host.ca }, trustedProxyHops: 1 });
    const origin = new URL(host.url).origin;
    const open = (path: string, requester: string) =>
      openConsent(authorizeUrl(service.url, { clientId: `${origin}${path}`, challenge: pkce().challenge }), { 'x-forwarded-for': requester });
    try {
      const greedy = [open('/a.json', '198.51.100.7'), open('/b.json', '198.51.100.7')];
      await expect.poll(() => held.length, WAIT_UNDER_LOAD).toBe(2);
      const third = await open('/c.json', '198.51.100.7');
      expect(third.status).toBe(400);
      expect(third.html).toContain('try again in a moment');
      // At the token endpoint the same is "try again", not a failed authentication (401), after
      // which a client may drop its credentials.
      const token = await fetch(`${service.url}/oauth/token`, {
        method: 'POST',
        headers: { 'x-forwarded-for': '198.51.100.7' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'emcp_rt_x', client_id: `${origin}/c.json` }),
      });
      expect(token.status).toBe(503);
      expect(((await token.json()) as { error: string }).error).toBe('temporarily_unavailable');
      const someoneElse = open('/d.json', '198.51.100.8');
      await expect.poll(() => held.length, WAIT_UNDER_LOAD).toBe(3);
      for (const release of held) release();
      expect((await Promise.all([...greedy, someoneElse])).map((page) => page.status)).toEqual([200, 200, 200]);
    } finally {
      await service.close();
      await host.close();
    }
  }, 20_000);
});
