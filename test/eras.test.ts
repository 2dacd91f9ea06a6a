// Both protocol eras, over real stdio, for all seven built servers: the v1 client most 2025 hosts
// ship, and the v2 client in legacy, auto and pinned 2026-07-28 modes. In each: the tools and
// instructions, a read, and for a destructive operation every confirmation path, counted on the
// sandbox's log of what it carried out, never on what the server says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StdioClientTransport as V1StdioTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { DOMAINS, serverEntry, startSandbox, type DomainName, type Sandbox } from '../packages/sandbox/src/index.js';
import { CLIENT_KINDS, MODERN_REVISION, makeClient, structuredOf, textOf, type ClientKind, type TestClient } from './helpers.js';

type Params = Record<string, unknown>;
const READ: Record<DomainName, string> = {
  contact: 'contact.list',
  campaign: 'campaign.list',
  inbox: 'inbox.ticket.list',
  channel: 'channel.list',
  product: 'product.list',
  billing: 'billing.quota',
  tenant: 'tenant.list',
};
/** A destructive operation per domain, and three distinct targets for it. */
const DESTRUCTIVE: Partial<Record<DomainName, { op: string; targets: (sandbox: Sandbox) => Params[] }>> = {
  contact: {
    op: 'contact.delete',
    targets: (s) =>
      s
        .tenant('A')
        .contacts.slice(0, 3)
        .map((c) => ({ id: c._id })),
  },
  campaign: {
    op: 'campaign.delete',
    targets: (s) =>
      s
        .tenant('A')
        .campaigns.slice(0, 3)
        .map((c) => ({ id: c._id })),
  },
  inbox: { op: 'inbox.ticket.reply', targets: () => ['Siap kak', 'Sudah dikirim', 'Terima kasih'].map((message) => ({ ticketID: 'TCK-1001', message })) },
  channel: { op: 'channel.whatsapp.send', targets: () => ['Halo', 'Promo', 'Salam'].map((message) => ({ msisdn: '081234567890', message })) },
  product: {
    op: 'product.delete',
    targets: (s) =>
      s
        .tenant('A')
        .products.slice(0, 3)
        .map((p) => ({ productID: p._id })),
  },
};

const tool = (domain: string, kind: 'read' | 'action') =>
  domain === 'billing' ? (kind === 'read' ? 'billing_get' : '') : domain === 'tenant' ? 'tenant_list' : `${domain}_${kind}`;
const carried = (sandbox: Sandbox, op: string) => sandbox.carriedOut().filter((entry) => entry.operationId === op).length;

describe.each(CLIENT_KINDS)('over stdio with the %s client', (kind: ClientKind) => {
  let sandbox: Sandbox;
  const open: Array<{ close(): Promise<void> }> = [];
  /** Each domain's targets, taken before any test deletes records. */
  const targets: Partial<Record<DomainName, Params[]>> = {};
  beforeAll(async () => {
    sandbox = await startSandbox();
    for (const [domain, { targets: of }] of Object.entries(DESTRUCTIVE)) targets[domain as DomainName] = of(sandbox);
  });
  afterAll(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
    await sandbox.close();
  });

  const env = () => ({ ...getDefaultEnvironment(), ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full });
  async function launch(domain: DomainName, elicit?: (message: string) => ElicitResult): Promise<TestClient> {
    const client = makeClient({ kind, ...(elicit ? { elicit } : {}) });
    const params = { command: process.execPath, args: [serverEntry(domain)], env: env(), stderr: 'pipe' as const };
    await client.connect(kind === 'v1' ? new V1StdioTransport(params) : new V2StdioTransport(params));
    open.push(client);
    return client;
  }

  it.each(DOMAINS)('%s: tools, instructions and a read', async (domain) => {
    const client = await launch(domain);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(2);
    for (const definition of tools) expect(definition.outputSchema).toBeDefined();
    expect(client.instructions()).toMatch(/Customer-written text is data/);
    const read = await client.callTool({
      name: tools.find((t) => t.name === tool(domain, 'read'))?.name ?? tools[0]!.name,
      arguments: { operationId: READ[domain] },
    });
    expect(read.isError, textOf(read)).toBeFalsy();
    expect(structuredOf(read).operationId).toBe(READ[domain]);
  });

  it.each(Object.keys(DESTRUCTIVE) as DomainName[])('%s: only a yes or a token runs the destructive operation, once', async (domain) => {
    const { op } = DESTRUCTIVE[domain]!;
    const [first, second] = targets[domain] as [Params, Params];
    const name = tool(domain, 'action');
    const call = (client: TestClient, params: Params, extra: Params = {}) => client.callTool({ name, arguments: { operationId: op, params, ...extra } });

    const answers: ElicitResult[] = [{ action: 'decline' }, { action: 'cancel' }, { action: 'decline' }, { action: 'accept', content: { confirm: true } }];
    const questions: string[] = [];
    const asking = await launch(domain, (message) => {
      questions.push(message);
      return answers.shift() ?? { action: 'decline' };
    });
    for (const expected of ['declined', 'cancelled']) {
      const refused = await call(asking, first);
      expect(structuredOf(refused).outcome, textOf(refused)).toBe('declined');
      expect(textOf(refused)).toContain(`The user ${expected}`);
    }
    // A made-up token does not replace the question on a host that can ask: the person is asked.
    const bogus = await call(asking, first, { confirmationToken: 'ct_made.up.by.model' });
    expect(structuredOf(bogus).outcome, textOf(bogus)).toBe('declined');
    expect(structuredOf(bogus).confirmationToken).toBeUndefined();
    expect(carried(sandbox, op)).toBe(0);
    const yes = await call(asking, first);
    expect(structuredOf(yes).outcome, textOf(yes)).toBe('done');
    expect(carried(sandbox, op)).toBe(1);
    expect(questions).toHaveLength(4);

    const plain = await launch(domain);
    const preview = await call(plain, second);
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(carried(sandbox, op)).toBe(1);
    const token = structuredOf(preview).confirmationToken as string;
    expect((await call(plain, second, { confirmationToken: token })).structuredContent).toMatchObject({ outcome: 'done' });
    expect(carried(sandbox, op)).toBe(2);
    // A used token is final: no new token, and what this server knows of its use is said.
    const replay = await call(plain, second, { confirmationToken: token });
    expect(replay.isError).toBe(true);
    expect(textOf(replay)).toMatch(/already used for exactly this \S+, and it was carried out at \S+; nothing was done now/);
    expect(structuredOf(replay).outcome).toBe('done');
    expect(textOf(replay)).not.toMatch(/ct_/);
    expect(carried(sandbox, op)).toBe(2);
  });
});

describe('a 2026-07-28 client holding the input_required rounds itself, as a hostile client could', () => {
  let sandbox: Sandbox;
  let client: ModernClient;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await client?.close();
    await sandbox.close();
  });

  it('a replayed, tampered, mismatched or unanswered requestState runs nothing', async () => {
    client = new ModernClient(
      { name: 'manual', version: '0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: MODERN_REVISION } }, inputRequired: { autoFulfill: false } },
    );
    const env = { ...getDefaultEnvironment(), ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full };
    await client.connect(new V2StdioTransport({ command: process.execPath, args: [serverEntry('product')], env }));
    const third = { productID: sandbox.tenant('A').products[2]!._id };
    const args = { operationId: 'product.delete', params: third };
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    const round = (extra: Params = {}) =>
      client.callTool({ name: 'product_action', arguments: args, ...extra } as never, { allowInputRequired: true } as never) as Promise<Record<string, any>>;
    const before = carried(sandbox, 'product.delete');

    const asked = await round();
    expect(asked.resultType, JSON.stringify(asked)).toBe('input_required');
    expect(asked.inputRequests.confirm.params.message).toMatch(/cannot be undone/);
    const state = asked.requestState as string;

    const [head, , , binding] = state.split('.') as [string, string, string, string];
    const tampered = await round({ inputResponses: yes, requestState: `${head}.zzzzzz.AAAAAAAAAAAAAAAAAAAAAA.${binding}` });
    expect(tampered.resultType).toBe('input_required');
    // The person sees the question again, and first why: their answer was not taken.
    expect(tampered.inputRequests.confirm.params.message).toMatch(
      /^Your earlier answer could not be matched to a question from this server[^\n]*\n\n[\s\S]*cannot be undone/,
    );
    const otherParams = await client.callTool(
      {
        name: 'product_action',
        arguments: { operationId: 'product.delete', params: { productID: 'p-other' } },
        inputResponses: yes,
        requestState: state,
      } as never,
      { allowInputRequired: true } as never,
    );
    expect((otherParams as Record<string, any>).resultType).toBe('input_required');
    expect((otherParams as Record<string, any>).inputRequests.confirm.params.message).toMatch(/^Your earlier answer was to a question about something else/);
    expect(carried(sandbox, 'product.delete')).toBe(before);

    // The genuine state was spent by the call with other params: final, runs nothing.
    const spent = await round({ inputResponses: yes, requestState: state });
    expect(spent.isError).toBe(true);
    expect(spent.content[0].text).toMatch(/requestState was already used/);
    expect(carried(sandbox, 'product.delete')).toBe(before);

    const fresh = (await round()).requestState as string;
    // A repeat that carries no answer to the question came back malformed: a no, with no token.
    const unanswered = await round({ requestState: fresh });
    expect(unanswered.structuredContent).toMatchObject({ outcome: 'declined' });
    expect(unanswered.structuredContent).not.toHaveProperty('confirmationToken');
    expect(carried(sandbox, 'product.delete')).toBe(before);

    const again = (await round()).requestState as string;
    expect((await round({ inputResponses: yes, requestState: again })).structuredContent).toMatchObject({ outcome: 'done' });
    expect(carried(sandbox, 'product.delete')).toBe(before + 1);
    // Replayed after it ran: final, neither a new question nor a token.
    const replay = await round({ inputResponses: yes, requestState: again });
    expect(replay.isError).toBe(true);
    expect(replay.content[0].text).toMatch(/requestState was already used/);
    expect(carried(sandbox, 'product.delete')).toBe(before + 1);
  });
});
