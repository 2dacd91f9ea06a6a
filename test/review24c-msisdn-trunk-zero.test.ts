// A number written with the trunk 0 kept after the country code (+62 (0)812…, 62 0812…) or with
// the international 00 prefix (0062 812…) is the same number as 62812…: it must reach the API as
// 62812…, never as 620812… or 62062812… (62 followed by digits, so the API takes it, and the
// contact, ticket or message goes to a number that does not exist).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { normalizeMsisdn } from '@engage-mcp/shared';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';

describe('msisdn written with a trunk 0 or the 00 prefix', () => {
  it.each([
    ['+62 (0)812-3456-7890', '6281234567890'],
    ['62 0812 3456 7890', '6281234567890'],
    ['+62 0812 3456 7890', '6281234567890'],
    ['0062 812 3456 7890', '6281234567890'],
    ['00 62 (0)812 3456 7890', '6281234567890'],
  ])('normalises %s to %s', (input, expected) => expect(normalizeMsisdn(input)).toBe(expected));

  it.each(['62 0', '00', '0062', '620', '62 00 812 3456 7890'])('refuses %j', (input) => expect(normalizeMsisdn(input)).toBeUndefined());
});

describe('through the built servers against the sandbox', () => {
  let sandbox: Sandbox;
  const servers: LaunchedServer[] = [];
  beforeAll(async () => {
    sandbox = await startSandbox({ sendStepMs: 60_000 });
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await sandbox?.close();
  });
  const call = async (domain: 'contact' | 'inbox', args: Record<string, unknown>) => {
    const server = await launchServer(domain, { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full });
    servers.push(server);
    return (await server.client.callTool({ name: `${domain}_action`, arguments: args })) as CallToolResult;
  };

  it('contact.create, contact.import and inbox.ticket.create send 62812…, not 620812… or 62062812…', async () => {
    const created = await call('contact', { operationId: 'contact.create', params: { name: 'Nomor Trunk', msisdn: '+62 (0)812-7777-0003' } });
    expect(created.isError, textOf(created)).toBeFalsy();
    const imported = await call('contact', { operationId: 'contact.import', params: { users: [{ name: 'Nomor Luar', msisdn: '0062 812 7777 005' }] } });
    expect(imported.isError, textOf(imported)).toBeFalsy();
    const opened = await call('inbox', { operationId: 'inbox.ticket.create', params: { msisdn: '62 0812 7777 0004', channel: 'whatsapp' } });
    expect(opened.isError, textOf(opened)).toBeFalsy();
    expect(structuredOf(opened).outcome).toBe('done');
    const sent = sandbox.carriedOut().map((entry) => [entry.operationId, entry.params.msisdn ?? (entry.params.users as Array<{ msisdn: string }>)[0]?.msisdn]);
    expect(sent).toEqual([
      ['contact.create', '6281277770003'],
      ['contact.import', '628127777005'],
      ['inbox.ticket.create', '6281277770004'],
    ]);
  });
});
