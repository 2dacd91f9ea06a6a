// Review 25c: every next step an answer names must be one this caller can take. Attacked: an OAuth
// connection whose grant has campaign.send but not campaign.read. A send whose answer was lost was
// answered "… check with campaign.progress before trying again"; the model, doing just that, was
// refused "campaign.progress needs the API scope campaign.read, which was not granted to this
// connection". A 404 said "Use campaign.list to find valid ids", refused the same way; a WhatsApp
// send granted inbox.reply alone was sent to billing.quota (quota.read). Now an answer names such a
// read only with what it needs: ask the user to check, or to reconnect granting that scope.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import type { Service } from '../packages/http/src/service.js';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf } from './helpers.js';
import { signIn } from './oauth-helpers.js';
import { oauthServicePerFile } from './oauth-service.js';

let sandbox: Sandbox;
let service: Service;

oauthServicePerFile({ ENGAGE_CONFIRM: 'none' }, (ready) => ({ sandbox, service } = ready));

/** Every operation id an answer tells the model to call ("check with X", "Use X to find", "see the result with X"). */
const named = (text: string) =>
  [...text.matchAll(/(?:check with|Check with|Use|see the result with|See the result with) ([a-z]+(?:\.[a-zA-Z]+)+)/g)].map((match) => match[1]!);

async function connect(scopes: string[], path = '/mcp') {
  const tokens = await signIn(service.url, sandbox.keys.full, { scopes, resource: `${service.url}${path}` });
  const client = makeClient({ kind: 'v2-modern' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(path, service.url), { requestInit: { headers: { authorization: `Bearer ${tokens.access}` } } }),
  );
  const call = async (tool: string, operationId: string, params: Record<string, unknown>) =>
    (await client.callTool({ name: tool, arguments: { operationId, params } })) as CallToolResult;
  return { client, call };
}

/** Follows every step the answer names, as a model would, through the tool that lists it: none may be refused for scope. */
async function followed(call: Awaited<ReturnType<typeof connect>>['call'], text: string, params: Record<string, unknown>) {
  const ids = named(text);
  for (const id of ids) {
    const tool = (await toolsOffered()).find((each) => (each.description ?? '').split('\n').some((line) => line.startsWith(`- ${id} [`)));
    expect(tool, `a tool offering ${id}`).toBeDefined();
    const answer = await call(tool!.name, id, params);
    expect(textOf(answer), `${id} named by: ${text}`).not.toMatch(/was not granted to this connection/);
  }
  return ids;
}

let tools: Array<{ name: string; description?: string }> | undefined;
async function toolsOffered(): Promise<Array<{ name: string; description?: string }>> {
  if (tools) return tools;
  const { client } = await connect(['campaign.read']);
  tools = (await client.listTools()).tools.map((tool) => ({ name: String(tool.name), description: String(tool.description ?? '') }));
  await client.close();
  return tools;
}

it('review25c: a lost campaign.send on a grant without campaign.read does not send the model to campaign.progress', async () => {
  const campaign = sandbox.tenant('A').campaigns.find((entry) => entry.status === 'draft')!;
  const { client, call } = await connect(['campaign.send']);
  try {
    sandbox.injectFault({ kind: 'reset-after', operationId: 'campaign.send' });
    const lost = await call('campaign_action', 'campaign.send', { id: campaign._id });
    expect(structuredOf(lost).outcome, textOf(lost)).toBe('unknown');
    await followed(call, textOf(lost), { id: campaign._id });
    // What it says instead: the user checks, and the scope that would let the model check.
    expect(textOf(lost)).toMatch(/ask the user to check/i);
    expect(textOf(lost)).toMatch(/campaign\.read/);
  } finally {
    await client.close();
  }
});

it('review25c: a 404 on a grant without campaign.read does not send the model to campaign.list', async () => {
  const { client, call } = await connect(['campaign.send']);
  try {
    const missing = await call('campaign_action', 'campaign.send', { id: 'no-such-campaign-25c' });
    expect(textOf(missing)).toMatch(/Not found \(HTTP 404\)/);
    await followed(call, textOf(missing), {});
    expect(textOf(missing)).toMatch(/campaign\.read/);
  } finally {
    await client.close();
  }
});

it('review25c: a lost WhatsApp send on a grant without quota.read does not send the model to billing.quota', async () => {
  const { client, call } = await connect(['inbox.reply']);
  try {
    sandbox.injectFault({ kind: 'reset-after', operationId: 'channel.whatsapp.send' });
    const lost = await call('channel_action', 'channel.whatsapp.send', { msisdn: '6281299990025', message: 'Halo' });
    expect(structuredOf(lost).outcome, textOf(lost)).toBe('unknown');
    await followed(call, textOf(lost), {});
    expect(textOf(lost)).toMatch(/quota\.read/);
  } finally {
    await client.close();
  }
});

it('review25c: with the read granted, the answer still names it, and it works', async () => {
  const { client, call } = await connect(['campaign.send', 'campaign.read']);
  try {
    const missing = await call('campaign_action', 'campaign.send', { id: 'no-such-campaign-25c' });
    expect(textOf(missing)).toMatch(/Use campaign\.list to find valid ids/);
    expect(await followed(call, textOf(missing), {})).toEqual(['campaign.list']);
  } finally {
    await client.close();
  }
});

// A grant for one domain's endpoint covers that connection alone: the campaign server's reads are
// another connection's (its own grant), so a 404 of contact.byCampaign still names campaign.list there.
it("review25c: a grant for /mcp/contact says nothing of the campaign server's reads", async () => {
  const { client, call } = await connect(['contact.read'], '/mcp/contact');
  try {
    const missing = await call('contact_read', 'contact.byCampaign', { campaignID: 'no-such-campaign-25c' });
    expect(textOf(missing)).toMatch(/Use campaign\.list \(campaign server\) to find valid ids/);
  } finally {
    await client.close();
  }
});

it('review25c: a grant for /mcp/campaign without campaign.read is not sent to campaign.list', async () => {
  const { client, call } = await connect(['campaign.send'], '/mcp/campaign');
  try {
    const missing = await call('campaign_action', 'campaign.send', { id: 'no-such-campaign-25c' });
    expect(textOf(missing)).toMatch(/Not found \(HTTP 404\)/);
    expect(textOf(missing)).not.toMatch(/Use campaign\.list/);
    expect(textOf(missing)).toMatch(/campaign\.read/);
  } finally {
    await client.close();
  }
});
