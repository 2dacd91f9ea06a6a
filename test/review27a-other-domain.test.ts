// Remote mode's /mcp serves every domain's tools on one server, but a listed tool given another
// domain's operationId (the model as attacker, or mistaken) was told that operation is "on the
// campaign server (engage-campaign, tools named campaign_…), a separate MCP server … call it there
// if the host has it, or tell the user it is not connected": wrong on /mcp, where campaign_read is
// on this same server, and silent about the scope an OAuth grant lacks (the same call within one
// domain names it). Now, on /mcp, another domain's operation is answered as one of this server's:
// the tool it belongs to, or the API scope the grant lacks, or the operator's setting that leaves
// it out; nothing is sent. A domain's own endpoint still points to that domain's server.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, textOf, type TestClient } from './helpers.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { signIn } from './oauth-helpers.js';
import { connectedOver, oauthServicePerFile } from './oauth-service.js';
import { launchService, stopService, type ServiceProcess } from './service-process.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({ ENGAGE_OPERATIONS_DENY: 'campaign.analytics' }, (ready) => ({ sandbox, service } = ready));

type Kind = 'v1' | 'v2-modern';

const connected = (kind: Kind, path: string, headers: Record<string, string>): Promise<TestClient> => connectedOver(service, kind, path, headers);

async function signedIn(kind: Kind, path: string, scopes: string[]): Promise<TestClient> {
  const tokens = await signIn(service.url, sandbox.keys.full, { scopes, resource: `${service.url}${path}` });
  return connected(kind, path, { authorization: `Bearer ${tokens.access}` });
}

/** contact_read given `operationId`: its answer's text, and that nothing went to the API. */
async function refused(client: TestClient, operationId: string): Promise<string> {
  const before = sandbox.requests().length;
  const result = await client.callTool({ name: 'contact_read', arguments: { operationId } });
  expect(result.isError, textOf(result)).toBe(true);
  expect(sandbox.requests().length).toBe(before);
  expect(textOf(result)).toMatch(/Nothing was sent\.$/);
  return textOf(result);
}

describe.each(['v1', 'v2-modern'] as const)('another domain’s operationId given to a listed tool (%s client)', (kind) => {
  it('on /mcp, with the grant holding its scope: the answer names the tool of this server it belongs to', async () => {
    const client = await signedIn(kind, '/mcp', ['contact.read', 'campaign.read']);
    try {
      const text = await refused(client, 'campaign.list');
      expect(text).toMatch(/operationId campaign\.list is not available: it belongs to the tool campaign_read\./);
      expect(text).not.toMatch(/separate MCP server|if the host has it|not connected/);
    } finally {
      await client.close();
    }
  });

  it('on /mcp, with the grant lacking its scope: the answer names the scope, as within a domain; a near miss too', async () => {
    const client = await signedIn(kind, '/mcp', ['contact.read']);
    try {
      expect(await refused(client, 'campaign.list')).toMatch(
        /operationId campaign\.list is not available: it needs the API scope campaign\.read, which was not granted to this connection; the user can reconnect this server and tick that permission/,
      );
      const nearMiss = await refused(client, 'Campaign.List');
      expect(nearMiss).toMatch(/Did you mean campaign\.list\? It is not available here: it needs the API scope campaign\.read, which was not granted/);
      expect(nearMiss).not.toMatch(/separate MCP server/);
      const misspelt = await refused(client, 'campaign.lst');
      expect(misspelt).toMatch(/Did you mean campaign\.list\? It is not available here: it needs the API scope campaign\.read/);
      expect(misspelt).not.toMatch(/separate MCP server/);
    } finally {
      await client.close();
    }
  });

  it('on /mcp, with the tenant key: the tool it belongs to; one the operator left out says so', async () => {
    const client = await connected(kind, '/mcp', { 'x-api-key': sandbox.keys.full });
    try {
      expect(await refused(client, 'campaign.list')).toMatch(/operationId campaign\.list is not available: it belongs to the tool campaign_read\./);
      expect(await refused(client, 'billing.payment.list')).toMatch(/it belongs to the tool billing_list\./);
      expect(await refused(client, 'campaign.analytics')).toMatch(
        /operationId campaign\.analytics is not available: it is excluded by ENGAGE_OPERATIONS_ALLOW or ENGAGE_OPERATIONS_DENY/,
      );
    } finally {
      await client.close();
    }
  });

  it('on /mcp, two tenants’ grants of different scopes, interleaved: each is listed and answered by its own grant', async () => {
    const narrow = await signIn(service.url, sandbox.keys.full, { scopes: ['contact.read'], resource: `${service.url}/mcp` });
    const broad = await signIn(service.url, sandbox.keys.otherTenant, {
      scopes: ['contact.read', 'contact.manage', 'campaign.read'],
      resource: `${service.url}/mcp`,
    });
    const clients = [
      {
        client: await connected(kind, '/mcp', { authorization: `Bearer ${narrow.access}` }),
        tools: ['contact_read'],
        answer: /it needs the API scope campaign\.read/,
      },
      {
        client: await connected(kind, '/mcp', { authorization: `Bearer ${broad.access}` }),
        tools: ['campaign_read', 'contact_action', 'contact_read'],
        answer: /it belongs to the tool campaign_read\./,
      },
    ];
    try {
      const rounds = await Promise.all(
        [1, 2, 3].flatMap(() =>
          clients.map(async ({ client, tools, answer }) => {
            const listed = (await client.listTools()).tools.map((tool) => String(tool.name)).sort();
            return { listed, tools, text: await refused(client, 'campaign.list'), answer };
          }),
        ),
      );
      for (const { listed, tools, text, answer } of rounds) {
        expect(listed).toEqual(tools);
        expect(text).toMatch(answer);
      }
    } finally {
      await Promise.allSettled(clients.map(({ client }) => client.close()));
    }
  });

  it('on /mcp/contact, another domain’s operation is still on another server (this endpoint serves one domain)', async () => {
    const client = await signedIn(kind, '/mcp/contact', ['contact.read']);
    try {
      expect(await refused(client, 'campaign.list')).toMatch(/names the campaign domain, whose operations are on the campaign server .* a separate MCP server/);
    } finally {
      await client.close();
    }
  });
});

describe('the built service (packages/http/dist/cli.js), OAuth on', () => {
  let built: ServiceProcess;
  let url: string;
  beforeAll(async () => {
    // OAuth needs its public URL at start: a port free now, named in it.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    built = launchService({
      ENGAGE_BASE_URL: sandbox.baseUrl,
      ENGAGE_HTTP_PORT: String(port),
      ENGAGE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ENGAGE_OAUTH_KEK: randomBytes(32).toString('base64'),
    });
    url = await built.url;
  });
  afterAll(async () => {
    if (built) await stopService(built.child);
  });

  it('on /mcp, a contact.read grant given campaign.list through contact_read is told the scope it needs; the key is told campaign_read', async () => {
    const tokens = await signIn(url, sandbox.keys.full, { scopes: ['contact.read'], resource: `${url}/mcp` });
    const credentials: Array<Record<string, string>> = [{ authorization: `Bearer ${tokens.access}` }, { 'x-api-key': sandbox.keys.full }];
    for (const headers of credentials) {
      const client = makeClient({ kind: 'v2-modern' });
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
      try {
        const text = await refused(client, 'campaign.list');
        expect(text).toMatch(
          'authorization' in headers ? /it needs the API scope campaign\.read, which was not granted/ : /it belongs to the tool campaign_read\./,
        );
        expect(text).not.toMatch(/separate MCP server/);
      } finally {
        await client.close();
      }
    }
  });
});
