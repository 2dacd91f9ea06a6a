// A model's wrong operationId gets the way to the right one: a missing one is called missing, a
// near miss (case, separator, a letter or two) names the operation meant, and another domain's
// operation names the server that has it. Nothing is sent in any case. Both protocol eras.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';

let sandbox: Sandbox;
const servers: InProcess[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  for (const kind of ['v1', 'v2-modern'] as const) servers.push(await inProcess(DOMAINS.contact!, sandbox, { kind }));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await sandbox.close();
});

const cases: Array<[string, Record<string, unknown>, RegExp]> = [
  ['missing', {}, /operationId is missing: contact_read needs one; use one of contact\.list, /],
  ['not a string', { operationId: 7 }, /operationId must be a string \(got 7\)/],
  ['another case', { operationId: 'Contact.List' }, /not an operation of contact_read; .*\. Did you mean contact\.list\?/],
  ['a tool name for an operation', { operationId: 'contact_list' }, /Did you mean contact\.list\?/],
  ['a letter too many', { operationId: 'contact.lists' }, /Did you mean contact\.list\?/],
  ['the other tool of this server', { operationId: 'contact.delet' }, /Did you mean contact\.delete\? It is not available here: .*contact_action/],
  [
    'another server',
    { operationId: 'campaign.list' },
    /names the campaign domain, whose operations are on the campaign server \(engage-campaign, tools named campaign_…\), a separate MCP server/,
  ],
];

describe.each([0, 1])('client %#', (index) => {
  it.each(cases)('%s', async (_name, args, message) => {
    sandbox.clearLogs();
    const result = (await servers[index]!.client.callTool({ name: 'contact_read', arguments: args })) as CallToolResult;
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toMatch(/Nothing was sent\.$/);
    expect(sandbox.requests()).toEqual([]);
  });

  it('a miss close to two operations suggests neither', async () => {
    const result = (await servers[index]!.client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.zz' } })) as CallToolResult;
    expect(textOf(result)).toMatch(/not an operation of contact_read/);
    expect(textOf(result)).not.toMatch(/Did you mean/);
  });
});
