// Review 43 (OAuth): when a client metadata document could not be fetched, the error page gave the
// network's own words: "connect ECONNREFUSED 127.0.0.1:4431" for a closed port, a TLS error for a
// port whose service speaks no TLS, "Hostname/IP does not match certificate's altnames: … DNS:…"
// naming a certificate's hosts, "resolves to a private address" for an internal name and ENOTFOUND
// for a missing one. Anyone could name any https://host:port/… as a client_id, so the page mapped
// hosts, ports and internal names through the service's address. Every such failure reads the same
// now; what the network said goes to the service's log only.
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { authorizeUrl, openConsent, pkce } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

const alertOf = (html: string) => /<p class="error" role="alert">(.*?)<\/p>/.exec(html)?.[1] ?? '';

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('review43: a client metadata document that could not be fetched', () => {
  it('a closed port and a port that speaks no TLS read the same, naming no address', async () => {
    const plain = createHttpServer((_req, res) => res.end('not TLS'));
    const plainPort = await listening(plain);
    const closing = createHttpServer();
    const closedPort = await listening(closing);
    await new Promise((resolve) => closing.close(resolve));
    const logs: string[] = [];
    // Loopback allowed, as for a metadata host on the internet.
    const service = await serveOAuth(sandbox, logs, { cimd: { allowPrivateAddresses: true } });
    try {
      const alerts: string[] = [];
      for (const port of [closedPort, plainPort]) {
        const page = await openConsent(authorizeUrl(service.url, { clientId: `https://localhost:${port}/client.json`, challenge: pkce().challenge }));
        expect(page.status).toBe(400);
        alerts.push(alertOf(page.html));
      }
      expect(alerts[0]).toContain('could not be fetched');
      expect(alerts[1]).toBe(alerts[0]);
      expect(alerts[0]).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|\d{4,5}/);
      // The operator still learns what happened.
      expect(logs.join('\n')).toContain('ECONNREFUSED');
    } finally {
      await service.close();
      await new Promise((resolve) => plain.close(resolve));
    }
  });

  it('a name that resolves to a private address reads as one that does not resolve at all', async () => {
    const service = await serveOAuth(sandbox, []);
    try {
      const internal = await openConsent(authorizeUrl(service.url, { clientId: 'https://localhost:4431/client.json', challenge: pkce().challenge }));
      const missing = await openConsent(authorizeUrl(service.url, { clientId: 'https://nothing-here.invalid/client.json', challenge: pkce().challenge }));
      expect([internal.status, missing.status]).toEqual([400, 400]);
      expect(alertOf(internal.html)).toContain('could not be fetched');
      expect(alertOf(internal.html)).toBe(alertOf(missing.html));
    } finally {
      await service.close();
    }
  });
});
