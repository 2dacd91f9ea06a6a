// Review 25c: the API refusing a key tells the model where a new key goes. Attacked: an OAuth
// connection (the URL alone, no header) whose tenant key, entered on the consent page, lacks a scope
// the grant holds. campaign.list answered the API's 403 with "… create a key with that scope … and
// send it with each request to this service (Authorization: Bearer <key> or X-API-Key), in the
// host's connector settings": this connector sends no key and has no such setting; the key goes in
// by signing in again. Now an OAuth connection's answer says so.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, textOf } from './helpers.js';
import { signIn } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({ ENGAGE_CONFIRM: 'none' }, (ready) => ({ sandbox, service } = ready));

it("review25c: an OAuth connection's key lacking a scope: the new key goes in by signing in again, not in a header", async () => {
  const key = sandbox.createKey(['contact.read', 'tenant.read']);
  const tokens = await signIn(service.url, key, { scopes: ['contact.read', 'campaign.read'] });
  const client = makeClient({ kind: 'v2-modern' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', service.url), { requestInit: { headers: { authorization: `Bearer ${tokens.access}` } } }),
  );
  try {
    const refused = (await client.callTool({ name: 'campaign_read', arguments: { operationId: 'campaign.list' } })) as CallToolResult;
    expect(textOf(refused)).toMatch(/HTTP 403/);
    expect(textOf(refused)).not.toMatch(/Authorization: Bearer|X-API-Key|connector settings/);
    expect(textOf(refused)).toMatch(/sign in again|reconnect/i);
  } finally {
    await client.close();
  }
});
