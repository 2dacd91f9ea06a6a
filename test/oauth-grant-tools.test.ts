// Remote mode with OAuth: tools/list shows only what the connection's grant lets the model call. A
// grant of campaign.read alone was shown campaign_action, annotated destructive, with
// campaign.send among its operations: a host that auto-approves read-only tools could not tell the
// connection was read-only, and every write the model tried was refused for scope. Now each tool
// lists the operations whose scope the grant holds, a tool with none is not listed, and the
// instructions say what is left out; in both protocol eras, per domain and on /mcp.
import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { textOf, type TestClient } from './helpers.js';
import { signIn } from './oauth-helpers.js';
import { connectedOver, oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({ ENGAGE_CONFIRM: 'none' }, (ready) => ({ sandbox, service } = ready));

type Kind = 'v1' | 'v2-modern';

const connected = (kind: Kind, path: string, authorization: Record<string, string>): Promise<TestClient> => connectedOver(service, kind, path, authorization);

async function signedIn(kind: Kind, path: string, scopes: string[]): Promise<TestClient> {
  const tokens = await signIn(service.url, sandbox.keys.full, { scopes, resource: `${service.url}${path}` });
  return connected(kind, path, { authorization: `Bearer ${tokens.access}` });
}

/** Each listed tool's name, annotations and the operations its operationId offers. */
async function listed(client: TestClient) {
  const { tools } = await client.listTools();
  return tools.map((tool) => ({
    name: String(tool.name),
    readOnly: (tool.annotations as { readOnlyHint?: boolean } | undefined)?.readOnlyHint,
    operations: ((tool.inputSchema as { properties: { operationId: { enum: string[] } } }).properties.operationId.enum ?? []).slice().sort(),
    description: String(tool.description ?? ''),
  }));
}

describe.each(['v1', 'v2-modern'] as const)('a grant narrows tools/list (%s client)', (kind) => {
  it('campaign.read alone: only the read tool, and the instructions say what is not listed', async () => {
    const client = await signedIn(kind, '/mcp/campaign', ['campaign.read']);
    try {
      const tools = await listed(client);
      expect(tools.map((tool) => tool.name)).toEqual(['campaign_read']);
      expect(tools[0]?.readOnly).toBe(true);
      expect(client.instructions()).toMatch(
        /Not listed: the operations that need the API scopes .*campaign\.send.*which this connection's sign-in did not grant/,
      );
      expect(client.instructions()).not.toMatch(/campaign_action changes live data/);
    } finally {
      await client.close();
    }
  });

  it('campaign.read and campaign.send: the action tool offers the sends alone; another write is refused for scope, nothing sent', async () => {
    const client = await signedIn(kind, '/mcp/campaign', ['campaign.read', 'campaign.send']);
    try {
      const action = (await listed(client)).find((tool) => tool.name === 'campaign_action');
      expect(action?.operations).toEqual(['campaign.send']);
      expect(action?.description).not.toMatch(/campaign\.create/);
      const before = sandbox.requests().length;
      const refused = await client.callTool({ name: 'campaign_action', arguments: { operationId: 'campaign.create', params: { name: 'x' } } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/campaign\.create is not available: it needs the API scope campaign\.manage, which was not granted to this connection/);
      expect(textOf(refused)).toMatch(/Nothing was sent\.$/);
      expect(sandbox.requests().length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it('on /mcp, a contact.read grant lists contact_read alone', async () => {
    const client = await signedIn(kind, '/mcp', ['contact.read']);
    try {
      const tools = await listed(client);
      expect(tools.map((tool) => tool.name)).toEqual(['contact_read']);
      // One line for the six domains the grant holds nothing of, not their instructions.
      expect(client.instructions()).toMatch(/Not listed: the campaign, inbox, channel, product, billing, tenant domains, none of whose API scopes/);
      expect(client.instructions()).not.toMatch(/campaign_action|billing_read/);
      const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list' } });
      expect(read.isError, textOf(read)).toBeFalsy();
    } finally {
      await client.close();
    }
  });
});

it('a grant of every scope, and a tenant key sent as X-API-Key, both list every operation', async () => {
  const byKey = await connected('v2-modern', '/mcp/campaign', { 'x-api-key': sandbox.keys.full });
  const everything = await listed(byKey);
  await byKey.close();
  const campaign = CATALOGS.find((domain) => domain.name === 'campaign')!;
  const scopes = [...new Set(campaign.operations.map((op) => op.scope))];
  const granted = await signedIn('v2-modern', '/mcp/campaign', scopes);
  try {
    expect(await listed(granted)).toEqual(everything);
    expect(everything.map((tool) => tool.name).sort()).toEqual(['campaign_action', 'campaign_read']);
  } finally {
    await granted.close();
  }
});
