// Review 37 (budget): without Redis each key has a share of confirmations (review35,
// confirmation-budget.ts), and keys the API has not accepted share one allowance. A request was
// counted when it brought a confirmationToken or a requestState, before the value was checked: a
// made-up key sending values that were never issued ("not-a-token"), no preview needed, used up the
// shared allowance, and a tenant's first yes on this service (its key not yet seen accepted) was
// refused 429. A share is now charged when a value is spent; one that fails its check is never
// charged. Values really spent still count, and past the share the next is refused. Both eras.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { ServiceMemoryGuardStore } from '../packages/http/src/memory-guard-store.js';
import { modernClient } from './service-process.js';
import { structuredOf, textOf } from './helpers.js';

type Result = Parameters<typeof textOf>[0];
interface EraClient {
  callTool(call: ReturnType<typeof send>): Promise<Result>;
  close(): Promise<void>;
}
const ERAS = ['2026-07-28', '2025 session'] as const;

/**
 * The guardrails' store, whose look-up of a write sent by another replica (made by every write call
 * before its confirmation is checked) can be held until several calls wait there: calls in flight at once.
 */
class HeldStore extends ServiceMemoryGuardStore {
  private waiting: Array<() => void> = [];
  private holdFor = 0;
  holdUntilWaiting(calls: number): void {
    this.holdFor = calls;
  }
  async lastSentWrite(): Promise<undefined> {
    if (this.holdFor === 0) return undefined;
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (this.waiting.length < this.holdFor) return;
      this.holdFor = 0;
      for (const release of this.waiting.splice(0)) release();
    });
    return undefined;
  }
}

let sandbox: Sandbox;
let service: Service;
let guardStore: HeldStore;
const clients: EraClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
beforeEach(async () => {
  guardStore = new HeldStore();
  service = await startService({
    guardStore,
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    confirmationBudget: { perKey: 5, unaccepted: 20 },
  });
});
afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  await service?.close();
});
afterAll(async () => {
  await sandbox?.close();
});

async function client(era: (typeof ERAS)[number], key: string, domain = 'channel'): Promise<EraClient> {
  let made: EraClient;
  if (era === '2026-07-28') made = (await modernClient(service.url, key, { domain })) as unknown as EraClient;
  else {
    const v1 = new V1Client({ name: 'review37', version: '0' });
    await v1.connect(new V1HttpTransport(new URL(`/mcp/${domain}`, service.url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    made = v1 as unknown as EraClient;
  }
  clients.push(made);
  return made;
}

const send = (message: string, confirmationToken?: string) => ({
  name: 'channel_action',
  arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message }, ...(confirmationToken ? { confirmationToken } : {}) },
});

/** The refusal's message when the call is refused at the door, else '' (answered). */
const refusalOf = (answer: Promise<unknown>) =>
  answer.then(
    () => '',
    (error: Error) => error.message,
  );

describe.each(ERAS)('the confirmation budget charges what was spent (%s)', (era) => {
  it("values never issued, from a made-up key, leave the shared allowance whole: a tenant's first yes is carried out", { timeout: 60_000 }, async () => {
    const attacker = await client(era, 'made-up-key-0123456789abcdef');
    // Twice the allowance, unshaped and shaped like ours (a token's five parts, its prefix): none is refused at the door.
    const shaped = `ct_${'A'.repeat(22)}.zzzzzz.aaaa.bbbb.cccc`;
    for (let at = 0; at < 40; at++) expect(textOf(await attacker.callTool(send('x', at % 2 ? shaped : 'not-a-token')))).toMatch(/not valid/);
    const tenant = await client(era, sandbox.keys.otherTenant);
    const preview = structuredOf(await tenant.callTool(send('Your order shipped')));
    const done = await tenant.callTool(send('Your order shipped', preview.confirmationToken as string));
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
  });

  it('values really spent still count: past the share the next is refused, and nothing runs', { timeout: 60_000 }, async () => {
    // Keys the API has not accepted: 20 between them. Each token brought back with other params is spent, and a fresh one comes back.
    const attacker = await client(era, 'made-up-key-fedcba9876543210');
    let token = structuredOf(await attacker.callTool(send('hi'))).confirmationToken as string;
    for (let round = 0; round < 20; round++) {
      const answer = await attacker.callTool(send(`other ${round}`, token));
      token = structuredOf(answer).confirmationToken as string;
      expect(token, textOf(answer)).toMatch(/^ct_/);
    }
    expect(await refusalOf(attacker.callTool(send('other', token)))).toMatch(/too_many_confirmations.*API keys the API has not accepted yet/);
    // A key the API accepted (one read): 5 of its own, then refused; its last token is left unspent.
    const reader = await client(era, sandbox.keys.full, 'tenant');
    expect((await reader.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } } as never)).isError).toBeFalsy();
    const tenant = await client(era, sandbox.keys.full);
    for (let round = 0; round < 5; round++) {
      const preview = structuredOf(await tenant.callTool(send(`sent ${round}`)));
      const done = await tenant.callTool(send(`sent ${round}`, preview.confirmationToken as string));
      expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    }
    const sent = sandbox.carriedOut().length;
    const preview = structuredOf(await tenant.callTool(send('one more')));
    expect(await refusalOf(tenant.callTool(send('one more', preview.confirmationToken as string)))).toMatch(/too_many_confirmations.*with this API key/);
    expect(sandbox.carriedOut().length).toBe(sent);
  });

  it('yeses in flight at once, all past the door together, spend no more than the share', { timeout: 60_000 }, async () => {
    const reader = await client(era, sandbox.keys.full, 'tenant');
    expect((await reader.callTool({ name: 'tenant_list', arguments: { operationId: 'tenant.list' } } as never)).isError).toBeFalsy();
    const tenants = await Promise.all(Array.from({ length: 10 }, () => client(era, sandbox.keys.full)));
    const tokens = await Promise.all(tenants.map(async (tenant, at) => structuredOf(await tenant.callTool(send(`at once ${at}`))).confirmationToken as string));
    const sent = sandbox.carriedOut().length;
    guardStore.holdUntilWaiting(10);
    const answers = await Promise.all(
      tenants.map((tenant, at) => tenant.callTool(send(`at once ${at}`, tokens[at])).then(textOf, (error: Error) => error.message)),
    );
    expect(sandbox.carriedOut().length - sent, answers.join('\n')).toBe(5);
    // All ten passed the door together: the five past the share are refused as they are spent, their tokens left unspent.
    const refused = answers.filter((each) => /already spent with this API key/.test(each));
    expect(refused).toHaveLength(5);
    for (const answer of refused) expect(answer).toMatch(/nothing was run/);
  });
});
