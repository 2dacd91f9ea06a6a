// Review 20, attacked: a 2026-07-28 host (SDK v2 client, input_required rounds held by hand) or a
// host without elicitation sending a spent requestState or confirmationToken again, as a host does
// when it retries a request whose answer it lost. Found: a yes that the claim stage turned away
// (the daily cap reached, the same write already sent after that yes) sent nothing, but shown
// again it was answered "This requestState was already used … so it may already have been
// carried out … Check with inbox.ticket.get", outcome unknown: the model would tell the person
// their message may have gone out. The answer now says nothing was carried out with it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { serverEntry, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { MODERN_REVISION, countCarriedOut } from './helpers.js';

type Result = Record<string, any>;
const yes = { confirm: { action: 'accept', content: { confirm: true } } };

let sandbox: Sandbox;
const open: ModernClient[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await sandbox.close();
});

/** The built inbox server over stdio, a 2026-07-28 client that holds the rounds itself (elicitation declared or not). */
async function inbox(env: Record<string, string>, elicitation: boolean) {
  const client = new ModernClient({ name: 'review20', version: '0' }, {
    capabilities: elicitation ? { elicitation: {} } : {},
    versionNegotiation: { mode: { pin: MODERN_REVISION } },
    inputRequired: { autoFulfill: false },
  } as never);
  open.push(client);
  const state = mkdtempSync(join(tmpdir(), 'review20-'));
  const base = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_STATE_DIR: state };
  await client.connect(new V2StdioTransport({ command: process.execPath, args: [serverEntry('inbox')], env: { ...getDefaultEnvironment(), ...base, ...env } }));
  return (args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    client.callTool({ name: 'inbox_action', arguments: args, ...extra } as never, { allowInputRequired: true } as never) as Promise<Result>;
}

const replies = () => countCarriedOut(sandbox, 'inbox.ticket.reply');
const replyTo = (index: number, message: string) => {
  const ticket = sandbox.tenant('A').tickets.filter((candidate) => candidate.status === 'open')[index]!;
  return { operationId: 'inbox.ticket.reply', params: { ticketID: ticket.ticketID, message } };
};
const text = (result: Result) => String(result.content?.[0]?.text);

function expectNothingCarriedOut(again: Result) {
  expect(again.isError).toBe(true);
  expect(again.structuredContent?.outcome, text(again)).toBe('refused');
  expect(text(again)).not.toMatch(/may already have been carried out/);
  expect(text(again)).toMatch(/already used, and nothing was carried out with it/);
}

describe('a yes the claim stage turned away, shown again', () => {
  it('requestState: refused by the daily cap, then sent again, is not said to have maybe run', async () => {
    const round = await inbox({ ENGAGE_CAP_MESSAGES_PER_DAY: '1' }, true);
    const first = replyTo(0, 'review20 one');
    const second = replyTo(1, 'review20 two');
    const before = replies();
    const askedFirst = await round(first);
    const askedSecond = await round(second);
    expect(askedSecond.resultType).toBe('input_required');
    expect((await round(first, { inputResponses: yes, requestState: askedFirst.requestState })).structuredContent?.outcome).toBe('done');
    const capped = await round(second, { inputResponses: yes, requestState: askedSecond.requestState });
    expect(text(capped)).toMatch(/ENGAGE_CAP_MESSAGES_PER_DAY/);
    expectNothingCarriedOut(await round(second, { inputResponses: yes, requestState: askedSecond.requestState }));
    expect(replies()).toBe(before + 1);
  });

  it('confirmationToken: refused by the daily cap, then sent again, is not said to have maybe run', async () => {
    const round = await inbox({ ENGAGE_CAP_MESSAGES_PER_DAY: '1' }, false);
    const first = replyTo(0, 'review20 three');
    const second = replyTo(1, 'review20 four');
    const before = replies();
    const tokenFirst = (await round(first)).structuredContent?.confirmationToken;
    const tokenSecond = (await round(second)).structuredContent?.confirmationToken;
    expect((await round({ ...first, confirmationToken: tokenFirst })).structuredContent?.outcome).toBe('done');
    expect(text(await round({ ...second, confirmationToken: tokenSecond }))).toMatch(/ENGAGE_CAP_MESSAGES_PER_DAY/);
    expectNothingCarriedOut(await round({ ...second, confirmationToken: tokenSecond }));
    expect(replies()).toBe(before + 1);
  });

  it('requestState: a second yes to the same write, turned away because the first sent it, then sent again', async () => {
    const round = await inbox({}, true);
    const reply = replyTo(2, 'review20 five');
    const before = replies();
    const one = (await round(reply)).requestState;
    const two = (await round(reply)).requestState;
    expect((await round(reply, { inputResponses: yes, requestState: one })).structuredContent?.outcome).toBe('done');
    expect(text(await round(reply, { inputResponses: yes, requestState: two }))).toMatch(/after this confirmation was given/);
    expectNothingCarriedOut(await round(reply, { inputResponses: yes, requestState: two }));
    expect(replies()).toBe(before + 1);
  });
});

// Found next: with the fix above, a second yes turned away because the first yes sent the same
// write was answered "nothing was carried out with it": true of that yes, but the model read it as
// "the reply was not sent", when it was, by the first. The answer now also says so.
describe('a spent confirmation whose own attempt sent nothing, while the same write went out by another', () => {
  it('requestState: the answer says nothing was done with it, and that exactly this write was sent and carried out', async () => {
    const round = await inbox({}, true);
    const reply = replyTo(0, 'review20 six');
    const before = replies();
    const one = (await round(reply)).requestState;
    const two = (await round(reply)).requestState;
    expect((await round(reply, { inputResponses: yes, requestState: one })).structuredContent?.outcome).toBe('done');
    await round(reply, { inputResponses: yes, requestState: two });
    const again = await round(reply, { inputResponses: yes, requestState: two });
    expectNothingCarriedOut(again);
    expect(text(again)).toMatch(/Exactly this inbox\.ticket\.reply was sent by this server at \S+ \(by another confirmation\), and it was carried out/);
    expect(replies()).toBe(before + 1);
  });

  it('confirmationToken: spent with other params, the same write then sent by another token, then shown again', async () => {
    const round = await inbox({}, false);
    const reply = replyTo(1, 'review20 seven');
    const other = replyTo(2, 'review20 seven');
    const before = replies();
    const mistaken = (await round(reply)).structuredContent?.confirmationToken;
    expect((await round({ ...other, confirmationToken: mistaken })).structuredContent?.outcome).toBe('preview');
    const token = (await round(reply)).structuredContent?.confirmationToken;
    expect((await round({ ...reply, confirmationToken: token })).structuredContent?.outcome).toBe('done');
    const again = await round({ ...reply, confirmationToken: mistaken });
    expectNothingCarriedOut(again);
    expect(text(again)).toMatch(/Exactly this inbox\.ticket\.reply was sent by this server at \S+ \(by another confirmation\), and it was carried out/);
    expect(replies()).toBe(before + 1);
  });
});
