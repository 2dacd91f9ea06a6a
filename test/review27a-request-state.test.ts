// Remote mode with OAuth, 2026-07-28 (review27a): the question a write asks (input_required) is its
// own grant's. Its requestState with a yes, repeated by another tenant with the same scopes, by the
// same tenant key sent as X-API-Key, or by another grant of that key, runs nothing (each is asked
// its own question), and leaves the asker's yes to run once.
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { MODERN_REVISION, countCarriedOut } from './helpers.js';
import { signIn } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({}, (ready) => ({ sandbox, service } = ready));

const SCOPES = ['contact.read', 'contact.manage', 'contact.delete'];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('a 2026-07-28 question (input_required) is its own grant’s', () => {
  /** A 2026-07-28 client that declares elicitation and answers rounds itself. */
  async function asker(headers: Record<string, string>): Promise<ModernClient> {
    const client = new ModernClient({ name: 'asker', version: '0' }, {
      capabilities: { elicitation: {} },
      inputRequired: { autoFulfill: false },
      versionNegotiation: { mode: { pin: MODERN_REVISION } },
    } as never);
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/contact', service.url), { requestInit: { headers } }));
    return client;
  }
  const yes = { confirm: { action: 'accept', content: { confirm: true } } };

  it('its requestState with a yes, repeated by another tenant, the key as X-API-Key or another grant of the key, runs nothing; the asker’s runs once', async () => {
    const resource = `${service.url}/mcp/contact`;
    const a = await signIn(service.url, sandbox.keys.full, { scopes: SCOPES, resource });
    const otherGrant = await signIn(service.url, sandbox.keys.full, { scopes: ['contact.read', 'contact.delete'], resource });
    const b = await signIn(service.url, sandbox.keys.otherTenant, { scopes: SCOPES, resource });
    const owner = await asker(bearer(a.access));
    const others = await Promise.all([asker(bearer(b.access)), asker({ 'x-api-key': sandbox.keys.full }), asker(bearer(otherGrant.access))]);
    try {
      const id = sandbox.tenant('A').contacts.at(-1)?._id as string;
      const call = (client: ModernClient, extra: Record<string, unknown> = {}) =>
        client.callTool(
          { name: 'contact_action', arguments: { operationId: 'contact.delete', params: { id } }, ...extra } as never,
          {
            allowInputRequired: true,
          } as never,
        ) as Promise<Record<string, unknown>>;
      const deleted = countCarriedOut(sandbox, 'contact.delete');
      const asked = await call(owner);
      expect(asked.resultType, JSON.stringify(asked)).toBe('input_required');
      const requestState = asked.requestState as string;
      for (const other of others) {
        const answer = await call(other, { inputResponses: yes, requestState });
        // Not taken: their own question instead (never a run on the owner's yes).
        expect(answer.resultType, JSON.stringify(answer)).toBe('input_required');
      }
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(deleted);
      const run = await call(owner, { inputResponses: yes, requestState });
      expect(run.isError, JSON.stringify(run)).toBeFalsy();
      expect(countCarriedOut(sandbox, 'contact.delete')).toBe(deleted + 1);
    } finally {
      await Promise.allSettled([owner, ...others].map((client) => client.close()));
    }
  });
});
