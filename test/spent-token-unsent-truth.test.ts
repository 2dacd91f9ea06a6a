// One stdio server: a confirmationToken whose yes was spent by a call that sent nothing because a
// guardrail refused it (the day's message cap, reached by another send after the preview). Shown
// again, the token was answered "it may already have been carried out", as if the message might
// have gone: the journal knew only of tokens spent before the claim. Any yes spent without its
// write going out is now answered "nothing was carried out with it".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let server: LaunchedServer;
const stateDir = mkdtempSync(join(tmpdir(), 'engage-spent-unsent-'));

beforeAll(async () => {
  sandbox = await startSandbox();
  server = await launchServer('channel', {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys.full,
    ENGAGE_STATE_DIR: stateDir,
    ENGAGE_CONFIRM: 'all',
    ENGAGE_CAP_MESSAGES_PER_DAY: '1',
  });
}, 30_000);
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const send = (args: Record<string, unknown>) =>
  server.client.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', ...args } }) as Promise<Record<string, any>>;

describe('a yes spent by a call a guardrail refused', () => {
  it('is answered, shown again, as spent with nothing carried out', async () => {
    const first = { msisdn: '081234567890', message: 'Pertama' };
    const second = { msisdn: '081234567891', message: 'Kedua' };
    const firstToken = structuredOf((await send({ params: first })) as never).confirmationToken as string;
    const secondToken = structuredOf((await send({ params: second })) as never).confirmationToken as string;
    expect(structuredOf((await send({ params: first, confirmationToken: firstToken })) as never).outcome).toBe('done');
    const capped = await send({ params: second, confirmationToken: secondToken });
    expect(structuredOf(capped as never).outcome, textOf(capped as never)).toBe('refused');
    const again = await send({ params: second, confirmationToken: secondToken });
    expect(again.isError).toBe(true);
    expect(structuredOf(again as never).outcome, textOf(again as never)).toBe('refused');
    expect(textOf(again as never)).toMatch(/nothing was carried out with it/);
    expect(countCarriedOut(sandbox, 'channel.whatsapp.send')).toBe(1);
  });
});
