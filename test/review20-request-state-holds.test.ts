// Review 20, attacked (held): a hostile 2026-07-28 host (SDK v2 client, input_required rounds held
// by hand) answering our question with odd values, over the built product server on stdio and
// over remote mode: a requestState of 2 MB, a preview's confirmationToken passed as the
// requestState, a requestState that is not a string, an accept whose content carries extra fields
// nested 100,000 deep, and a requestState issued to one key brought back with another key of the
// same tenant or of another tenant. Each runs nothing (odd values are asked again or refused by
// the SDK), the server stays up, and the one call truly approved runs once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ALL_SCOPES, serverEntry, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { MODERN_REVISION, countCarriedOut } from './helpers.js';

type Result = Record<string, any>;
const yes = { confirm: { action: 'accept', content: { confirm: true } } };
const clients: ModernClient[] = [];

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await sandbox.close();
});

function modernClient(elicitation: boolean): ModernClient {
  const client = new ModernClient({ name: 'review20', version: '0' }, {
    capabilities: elicitation ? { elicitation: {} } : {},
    versionNegotiation: { mode: { pin: MODERN_REVISION } },
    inputRequired: { autoFulfill: false },
  } as never);
  clients.push(client);
  return client;
}

const caller =
  (client: ModernClient, tool: string) =>
  (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    client.callTool({ name: tool, arguments: args, ...extra } as never, { allowInputRequired: true } as never) as Promise<Result>;

describe('a 2026-07-28 host answering with odd values', () => {
  it('runs nothing on a huge, other-kind or non-string requestState; an accept with deep extra fields runs the approved call once', async () => {
    const deleted = () => countCarriedOut(sandbox, 'product.delete');
    const env = { ...getDefaultEnvironment(), ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full };
    const asking = modernClient(true);
    const transport = new StdioClientTransport({ command: process.execPath, args: [serverEntry('product')], env });
    await asking.connect(transport);
    const round = caller(asking, 'product_action');
    const args = { operationId: 'product.delete', params: { productID: sandbox.tenant('A').products[0]!._id } };

    expect((await round(args, { inputResponses: yes, requestState: `rs_${'a'.repeat(2_000_000)}.b.c.d.e` })).resultType).toBe('input_required');
    expect((await round(args, { inputResponses: yes, requestState: 'ct_aaaa.bbbb.cccc.dddd.eeee' })).resultType).toBe('input_required');
    await expect(round(args, { inputResponses: yes, requestState: { confirm: true } })).rejects.toThrow(/Invalid or expired requestState/);
    expect(deleted()).toBe(0);

    // The accept's content with a field 100,000 levels deep, written on the wire as it is (a JSON
    // encoder would refuse it): only `confirm` is read.
    const state = (await round(args)).requestState as string;
    const send = transport.send.bind(transport);
    let rawWrites = 0;
    transport.send = async (message) => {
      const text = JSON.stringify(message);
      if (!text.includes('"DEEP"')) return send(message);
      const depth = 100_000;
      rawWrites++;
      (transport as unknown as { _process: { stdin: NodeJS.WritableStream } })._process.stdin.write(
        `${text.replace('"DEEP"', `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)}\n`,
      );
    };
    const odd = { confirm: { action: 'accept', content: { confirm: true, params: { productID: 'other' }, deep: 'DEEP' } }, other: { action: 'decline' } };
    expect((await round(args, { inputResponses: odd, requestState: state })).structuredContent?.outcome).toBe('done');
    expect(rawWrites).toBe(1);
    expect(deleted()).toBe(1);
    expect((await round(args, { inputResponses: yes, requestState: state })).content[0].text).toMatch(/requestState was already used/);
    expect(deleted()).toBe(1);
  });

  it('remote mode: a requestState brought back with another key of the tenant, or another tenant, runs nothing and stays good for its own key', async () => {
    const service: Service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => undefined });
    try {
      const connect = async (key: string) => {
        const client = modernClient(true);
        const headers = { authorization: `Bearer ${key}` };
        await client.connect(new StreamableHTTPClientTransport(new URL('/mcp/contact', service.url), { requestInit: { headers } }));
        return caller(client, 'contact_action');
      };
      const own = await connect(sandbox.keys.full);
      const sameTenant = await connect(sandbox.createKey(ALL_SCOPES));
      const otherTenant = await connect(sandbox.keys.otherTenant);
      const deleted = () => countCarriedOut(sandbox, 'contact.delete');
      const args = { operationId: 'contact.delete', params: { id: sandbox.tenant('A').contacts[0]!._id } };
      const state = (await own(args)).requestState as string;
      expect((await sameTenant(args, { inputResponses: yes, requestState: state })).resultType).toBe('input_required');
      expect((await otherTenant(args, { inputResponses: yes, requestState: state })).resultType).toBe('input_required');
      expect(deleted()).toBe(0);
      expect((await own(args, { inputResponses: yes, requestState: state })).structuredContent?.outcome).toBe('done');
      expect(deleted()).toBe(1);
    } finally {
      await service.close();
    }
  });
});
