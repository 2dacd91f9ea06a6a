// With OAuth on, the consent page asks the person which permissions a host gets. On a service run
// with ENGAGE_READ_ONLY=true (or with operations denied), it offered every scope of the catalog
// anyway: /mcp/campaign's page offered "Send campaigns to their recipients" (campaign.send),
// campaign.manage and campaign.control, and the metadata advertised them, though the service runs
// none of their operations; a person could tick "send campaigns" for a connection that can never
// send, and a grant held it. Now an endpoint offers the scopes of the operations it serves (after
// read-only mode and the allow and deny lists), on its page, in its metadata and in the grant.
// And /mcp's instructions named a domain the settings leave without operations as one "none of
// whose API scopes this connection's sign-in granted (the user can reconnect this server and tick
// them)", even to a connection with no sign-in (the key sent itself), and to a grant that could
// never tick them: such a domain is now said to be left out by the service's settings.
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient } from './helpers.js';
import { REDIRECT, authorizeUrl, openConsent, pkce, postConsent, register, signIn, tokenRequest } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({ ENGAGE_READ_ONLY: 'true', ENGAGE_OPERATIONS_DENY: 'contact.byCampaign,contact.list' }, (ready) => ({ sandbox, service } = ready));

/** The scopes a consent page offers (its checkboxes), in order. */
async function offered(resource: string, clientId: string): Promise<string[]> {
  const page = await openConsent(authorizeUrl(service.url, { clientId, challenge: pkce().challenge, resource }));
  expect(page.status).toBe(200);
  return [...page.html.matchAll(/name="scope" value="([^"]+)"/g)].map((match) => match[1] as string);
}

const metadata = async (path: string) =>
  (await (await fetch(`${service.url}/.well-known/oauth-protected-resource${path}`)).json()) as { scopes_supported: string[] };

describe('a read-only service (ENGAGE_READ_ONLY=true, contact reads denied)', () => {
  it('offers on its consent pages and in its metadata only the scopes of operations it serves', async () => {
    const { client_id } = await register(service.url);
    expect(await offered(`${service.url}/mcp/campaign`, client_id)).toEqual(['campaign.read']);
    expect((await metadata('/mcp/campaign')).scopes_supported).toEqual(['campaign.read']);
    // Every contact operation is a write (read-only mode) or denied: nothing to grant there, and the sign-in goes back saying so.
    const none = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge: pkce().challenge, resource: `${service.url}/mcp/contact` }));
    expect(none.status).toBe(303);
    const back = new URL(none.headers.get('location') ?? 'http://x/');
    expect(back.searchParams.get('error')).toBe('invalid_target');
    expect(back.searchParams.get('error_description')).toMatch(/serves no operation here/);
    const all = await offered(`${service.url}/mcp`, client_id);
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((scope) => scope.endsWith('.read'))).toBe(true);
    expect(all).not.toContain('contact.read');
    expect((await metadata('/mcp')).scopes_supported).toEqual(all);
    const server = (await (await fetch(`${service.url}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported: string[] };
    expect(server.scopes_supported).toEqual(all);
  });

  it('a consent form that ticks a write scope anyway grants only what the endpoint serves', async () => {
    const { client_id } = await register(service.url);
    const { verifier, challenge } = pkce();
    const resource = `${service.url}/mcp/campaign`;
    const page = await openConsent(authorizeUrl(service.url, { clientId: client_id, challenge, resource, scope: 'campaign.read campaign.send' }));
    const answer = await postConsent(service.url, page, { key: sandbox.keys.full, scopes: ['campaign.read', 'campaign.send'] });
    const code = new URL(answer.location ?? 'http://x/').searchParams.get('code') ?? '';
    const tokens = await tokenRequest(service.url, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id,
      resource,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('campaign.read');
  });
});

describe.each(['v1', 'v2-modern'] as const)('/mcp’s instructions on that service (%s client)', (kind) => {
  /** The instructions /mcp gives a connection with these headers. */
  async function instructionsWith(headers: Record<string, string>): Promise<string> {
    const client = makeClient({ kind });
    const url = new URL('/mcp', service.url);
    const requestInit = { headers };
    await client.connect(kind === 'v1' ? new LegacyHttpTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit }));
    try {
      return client.instructions() ?? '';
    } finally {
      await client.close();
    }
  }

  it('a domain the settings leave out is said to be the operator’s doing, never a sign-in’s to tick (it was, with no sign-in at all)', async () => {
    const byKey = await instructionsWith({ 'x-api-key': sandbox.keys.full });
    expect(byKey).not.toMatch(/sign-in/);
    expect(byKey).toMatch(/Not served: the contact domain, every operation of which this service's settings leave out/);
    const tokens = await signIn(service.url, sandbox.keys.full, { scopes: ['campaign.read'], resource: `${service.url}/mcp` });
    const granted = await instructionsWith({ authorization: `Bearer ${tokens.access}` });
    expect(granted).toMatch(/Not listed: the inbox, channel, product, billing, tenant domains, none of whose API scopes this connection's sign-in granted/);
    expect(granted).toMatch(/Not served: the contact domain, every operation of which this service's settings leave out/);
  });
});
