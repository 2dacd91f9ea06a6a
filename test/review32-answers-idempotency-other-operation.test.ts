// Review 32 (answers): an idempotencyKey first used for one operation and then for another with
// the very same params (campaign.send, then campaign.cancel of that campaign) was refused as "used
// … for campaign.send with other params": untrue, and it sent the model comparing params that
// were the same. Now the refusal names the other operation as what differs; a key reused for the
// same operation with other params reads as before. Through the built server, as a host runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchServer, startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
let server: LaunchedServer;
beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000 });
  server = await launchServer('campaign', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none' });
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
});

async function act(operationId: string, params: Record<string, unknown>, idempotencyKey: string) {
  const result = await server.client.callTool({ name: 'campaign_action', arguments: { operationId, params, idempotencyKey } });
  const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('\n');
  return { text, outcome: (result.structuredContent as { outcome?: string } | undefined)?.outcome };
}

it('a key reused for another operation with the same params names the operation, not other params', async () => {
  const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
  expect((await act('campaign.send', { id: draft._id }, 'r32-send-then-cancel')).outcome).toBe('done');
  const reused = await act('campaign.cancel', { id: draft._id }, 'r32-send-then-cancel');
  expect(reused.outcome).toBe('refused');
  expect(reused.text).toMatch(/^Refused: this idempotencyKey was used at \S+ for another operation, campaign\.send; nothing was sent\./);
  expect(reused.text).not.toMatch(/other params/);
});

it('a key reused for the same operation with other params still says so', async () => {
  const first = await act('campaign.create', { name: 'R32 satu', message: 'Halo', channel: 'email' }, 'r32-create-twice');
  expect(first.outcome).toBe('done');
  const reused = await act('campaign.create', { name: 'R32 dua', message: 'Halo', channel: 'email' }, 'r32-create-twice');
  expect(reused.text).toMatch(/^Refused: this idempotencyKey was used at \S+ for campaign\.create with other params; nothing was sent\./);
});
