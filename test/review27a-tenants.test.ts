// Remote mode with OAuth, attacked as two tenants with the same scopes (review27a): interleaved
// calls on /mcp/<domain> and /mcp in both eras each reach their own tenant (the sandbox records
// which key each request carried), a confirmation is its own grant's, and what one is listed and
// told shows nothing of the other. Then grants under a live 2025 session: another grant's token
// (narrower, or another tenant's) on it is refused, a refreshed token goes on with the same grant,
// a revoked one is refused.
import { describe, expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf, type TestClient } from './helpers.js';
import { register, signIn, tokenRequest } from './oauth-helpers.js';
import { connectedOver, oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({}, (ready) => ({ sandbox, service } = ready));

type Kind = 'v1' | 'v2-modern';
const SCOPES = ['contact.read', 'contact.manage', 'contact.delete'];

const connected = (kind: Kind, path: string, headers: Record<string, string>): Promise<TestClient> => connectedOver(service, kind, path, headers);

let registered: Promise<string> | undefined;
/** A sign-in through this file's one registered client (registrations are limited per requester: 20 an hour). */
const grant = async (key: string, options: { scopes: string[]; resource: string }) =>
  signIn(service.url, key, { ...options, clientId: await (registered ??= register(service.url).then((client) => client.client_id)) });

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const contactIds = (which: 'A' | 'B') => new Set(sandbox.tenant(which).contacts.map((contact) => contact._id));

/** The ids of the contacts a contact.list answer shows. */
function listedIds(result: Awaited<ReturnType<TestClient['callTool']>>): string[] {
  return [...textOf(result).matchAll(/"_id":"([0-9a-f]{24})"/g)].map((match) => match[1] as string);
}

const list = (client: TestClient) => client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', params: {} } });

describe.each(['v1', 'v2-modern'] as const)('two tenants with the same scopes (%s client)', (kind) => {
  it.each(['/mcp/contact', '/mcp'])('on %s, interleaved calls each reach their own tenant, and neither is shown anything of the other', async (path) => {
    const resource = `${service.url}${path}`;
    const a = await grant(sandbox.keys.full, { scopes: SCOPES, resource });
    const b = await grant(sandbox.keys.otherTenant, { scopes: SCOPES, resource });
    const keyB = sandbox.createKey(SCOPES, { tenant: 'B', label: `keyB-${kind}-${path}` });
    const clients = {
      full: await connected(kind, path, bearer(a.access)),
      otherTenant: await connected(kind, path, bearer(b.access)),
      [`keyB-${kind}-${path}`]: await connected(kind, path, { 'x-api-key': keyB }),
    };
    try {
      // Same scopes: the same list and the same instructions, word for word.
      expect(await clients.otherTenant.listTools()).toEqual(await clients.full.listTools());
      expect(clients.otherTenant.instructions()).toBe(clients.full.instructions());
      sandbox.clearLogs();
      const rounds = await Promise.all(
        [1, 2, 3].flatMap(() => Object.entries(clients).map(async ([label, client]) => ({ label, result: await list(client) }))),
      );
      for (const { label, result } of rounds) {
        const own = contactIds(label === 'full' ? 'A' : 'B');
        const ids = listedIds(result);
        expect(ids.length, textOf(result)).toBe(own.size);
        expect(ids.every((id) => own.has(id))).toBe(true);
      }
      const labels = sandbox.requests().map((request) => request.keyLabel);
      for (const label of Object.keys(clients)) expect(labels.filter((each) => each === label)).toHaveLength(3);
      expect(labels).toHaveLength(9);
    } finally {
      await Promise.allSettled(Object.values(clients).map((client) => client.close()));
    }
  });

  it('a confirmation is its own grant’s: another tenant, the same tenant’s key sent as X-API-Key and another grant of the same key are refused, nothing run', async () => {
    const resource = `${service.url}/mcp/contact`;
    const a = await grant(sandbox.keys.full, { scopes: SCOPES, resource });
    const otherGrant = await grant(sandbox.keys.full, { scopes: SCOPES, resource });
    const narrower = await grant(sandbox.keys.full, { scopes: ['contact.read', 'contact.delete'], resource });
    const b = await grant(sandbox.keys.otherTenant, { scopes: SCOPES, resource });
    const owner = await connected(kind, '/mcp/contact', bearer(a.access));
    const others = await Promise.all([
      connected(kind, '/mcp/contact', bearer(b.access)),
      connected(kind, '/mcp/contact', { 'x-api-key': sandbox.keys.full }),
      connected(kind, '/mcp/contact', bearer(otherGrant.access)),
      connected(kind, '/mcp/contact', bearer(narrower.access)),
    ]);
    try {
      const id = sandbox.tenant('A').contacts.at(-1)?._id as string;
      const deleted = countCarriedOut(sandbox, 'contact.delete');
      const call = (client: TestClient, confirmationToken?: string) =>
        client.callTool({
          name: 'contact_action',
          arguments: { operationId: 'contact.delete', params: { id }, ...(confirmationToken ? { confirmationToken } : {}) },
        });
      const preview = await call(owner);
      expect(structuredOf(preview).outcome, textOf(preview)).toBe('preview');
      const token = structuredOf(preview).confirmationToken as string;
      for (const other of others) {
        const refused = await call(other, token);
        // Refused, and asked again as their own preview (of their own tenant, where the contact is not).
        expect(structuredOf(refused).outcome, textOf(refused)).toBe('preview');
        expect(textOf(refused)).toMatch(
          /^The confirmationToken is not valid \(not one this server issued for this key since it started, or altered\): nothing was run\./,
        );
      }
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(deleted);
      // Unspent by their tries: the owner's yes still runs, once.
      const done = await call(owner, token);
      expect(structuredOf(done).outcome, textOf(done)).toBe('done');
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(deleted + 1);
      expect(sandbox.carriedOut().at(-1)).toMatchObject({ operationId: 'contact.delete', tenantId: sandbox.tenant('A').tenantId, params: { id } });
    } finally {
      await Promise.allSettled([owner, ...others].map((client) => client.close()));
    }
  });
});

describe('grants under a live 2025 session', () => {
  it('another grant’s token (narrower, or another tenant’s) is refused on it; a refreshed token goes on with the same grant; a revoked one is refused', async () => {
    const resource = `${service.url}/mcp/contact`;
    const broad = await grant(sandbox.keys.full, { scopes: SCOPES, resource });
    const narrower = await grant(sandbox.keys.full, { scopes: ['contact.read'], resource });
    const other = await grant(sandbox.keys.otherTenant, { scopes: SCOPES, resource });
    const headers = bearer(broad.access);
    const client = await connected('v1', '/mcp/contact', headers);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['contact_action', 'contact_read']);
      const before = sandbox.requests().length;
      // Refused with the reason: a grant of the same key is another connection of that key (it was told "another API key").
      const refusals = [
        { token: narrower.access, why: /"session_key"[\s\S]*opened through another connection of the same API key \(another OAuth sign-in/ },
        { token: other.access, why: /"session_key"[\s\S]*opened with another API key/ },
      ];
      for (const { token, why } of refusals) {
        headers.authorization = `Bearer ${token}`;
        await expect(list(client)).rejects.toThrow(why);
        await expect(client.listTools()).rejects.toThrow(why);
      }
      expect(sandbox.requests().length).toBe(before);
      const refreshed = await tokenRequest(service.url, { grant_type: 'refresh_token', refresh_token: broad.refresh, client_id: broad.clientId });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.scope).toBe(SCOPES.join(' '));
      headers.authorization = `Bearer ${refreshed.body.access_token as string}`;
      const read = await list(client);
      expect(listedIds(read).length, textOf(read)).toBe(contactIds('A').size);
      const revoked = await fetch(`${service.url}/oauth/revoke`, {
        method: 'POST',
        body: new URLSearchParams({ token: refreshed.body.refresh_token as string, client_id: broad.clientId }),
      });
      expect(revoked.status).toBe(200);
      const afterRead = sandbox.requests().length;
      await expect(list(client)).rejects.toThrow(/401|invalid_token|Unauthorized/i);
      expect(sandbox.requests().length).toBe(afterRead);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
