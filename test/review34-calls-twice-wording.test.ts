// Review 34 (calls), attacking cfd388f: a write that needs no yes, repeated after its first outcome
// was unknown, says "the customer may now have it twice". Attacked: a write that sends nobody
// anything (campaign.create, which needs no yes under the default ENGAGE_CONFIRM). Found: its "Done"
// said "the customer may now have it twice" of a draft campaign made, though no customer was sent
// anything: what may be twice is the write itself (two drafts). Now a write that sends no message
// says it may have been carried out twice; a send still says the customer may have it twice.
// Through the built campaign and channel servers over stdio.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchServer, type LaunchedServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let campaign: LaunchedServer;
let channel: LaunchedServer;
const dir = mkdtempSync(join(tmpdir(), 'review34-twice-'));
beforeAll(async () => {
  sandbox = await startSandbox();
  [campaign, channel] = await Promise.all([
    launchServer('campaign', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_STATE_DIR: join(dir, 'campaign') }),
    launchChannel(sandbox, join(dir, 'channel'), 'none'),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([campaign?.close(), channel?.close()]);
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const create = (params: Record<string, unknown>) =>
  campaign.client.callTool({ name: 'campaign_action', arguments: { operationId: 'campaign.create', params } }) as Promise<CallToolResult>;

it('a draft campaign made again after an unknown outcome may be there twice; no customer is said to have anything', async () => {
  const params = { name: 'Promo Review34', message: 'Diskon akhir tahun', channel: 'whatsapp' };
  sandbox.injectFault({ kind: 'reset-after', operationId: 'campaign.create', times: 1 });
  expect(structuredOf(await create(params))).toMatchObject({ outcome: 'unknown' });
  const repeat = await create(params);
  expect(countCarriedOut(sandbox, 'campaign.create'), textOf(repeat)).toBe(2);
  expect(textOf(repeat)).toMatch(/^Done: campaign\.create was carried out\./);
  expect(textOf(repeat)).toMatch(/whether that one was carried out is unknown: it may now have been carried out twice/);
  expect(textOf(repeat)).not.toContain('the customer may now have it twice');
});

it('a WhatsApp message sent again still says the customer may have it twice', async () => {
  const params = { msisdn: '6281377700342', message: 'Pesanan Anda sudah dikirim' };
  sandbox.injectFault({ kind: 'reset-after', operationId: SEND, times: 1 });
  expect(structuredOf(await callSend(channel, { params }))).toMatchObject({ outcome: 'unknown' });
  expect(textOf(await callSend(channel, { params }))).toContain('the customer may now have it twice');
});
