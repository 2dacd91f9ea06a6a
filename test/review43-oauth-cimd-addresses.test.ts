// Review 43 (OAuth): a client metadata document's URL may name an IP address, which is fetched
// without a DNS lookup, so the address check is all that stands before the connection. It blocked
// loopback, private and link-local ranges, but not the IPv6 ranges that carry an IPv4 address to a
// translator or tunnel (on a network with a local NAT64 prefix, https://[64:ff9b:1::a00:1]/… is
// 10.0.0.1), nor the rest of RFC 6890's special-use addresses, which the CIMD draft says a server
// must not fetch. They are refused now, before any connection, as the private ranges are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { authorizeUrl, openConsent, pkce } from './oauth-helpers.js';
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

const SPECIAL_USE = [
  'https://[64:ff9b:1::a00:1]/client.json', // NAT64 local-use prefix (RFC 8215) → 10.0.0.1
  'https://[::a00:1]/client.json', // IPv4-compatible (deprecated) → 10.0.0.1
  'https://[::ffff:0:a00:1]/client.json', // IPv4-translated (SIIT) → 10.0.0.1
  'https://[2002:a00:1::1]/client.json', // 6to4 of 10.0.0.1
  'https://[2001:0:a00:1::1]/client.json', // Teredo
  'https://[100::1]/client.json', // discard-only
  'https://192.0.2.10/client.json', // documentation (TEST-NET-1)
  'https://198.51.100.10/client.json', // documentation (TEST-NET-2)
  'https://203.0.113.10/client.json', // documentation (TEST-NET-3)
];

describe('review43: a client metadata URL naming a special-use address', () => {
  it.each(SPECIAL_USE)('%s is refused before any connection', async (clientId) => {
    const page = await openConsent(authorizeUrl(service.url, { clientId, challenge: pkce().challenge }));
    expect(page.status).toBe(400);
    expect(page.html).toContain('points at a private or loopback address');
  });
});
