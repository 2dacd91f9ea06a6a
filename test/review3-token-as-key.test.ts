// Review 3: one of our OAuth tokens sent as X-API-Key was taken for a tenant key (key mode) and
// sent on to the API with the call: our access and refresh tokens are for us only. It is refused
// here with the OAuth challenge, before anything is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { makeClient } from './helpers.js';
import { signIn } from './oauth-helpers.js';
import { serveOAuth } from './review3-helpers.js';

let sandbox: Sandbox;
let service: Service;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await serveOAuth(sandbox, logs);
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

describe('our tokens in X-API-Key', () => {
  it('an access or refresh token in X-API-Key gets the OAuth challenge and never reaches the API', async () => {
    const tokens = await signIn(service.url, sandbox.keys.full);
    for (const token of [tokens.access, tokens.refresh]) {
      const before = sandbox.requests().length;
      const client = makeClient({ kind: 'v2-modern' });
      const attempt = async () => {
        await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/contact', service.url), { requestInit: { headers: { 'x-api-key': token } } }));
        return client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
      };
      await expect(attempt()).rejects.toThrow(/401|Unauthorized/i);
      await client.close().catch(() => undefined);
      expect(sandbox.requests().length).toBe(before);
      const bare = await fetch(`${service.url}/mcp`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': 'application/json' }, body: '{}' });
      expect(bare.status).toBe(401);
      expect(bare.headers.get('www-authenticate')).toContain('resource_metadata=');
    }
  });
});
