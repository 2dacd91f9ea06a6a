// A write that needs no yes, repeated after its first attempt ended with an unknown outcome (the
// API reset the connection after doing the work): the repeat went out and was answered a plain
// "Done: … was carried out.", though this server had sent exactly the same write moments before and
// could not say whether that one went out: the customer may have it twice, and the model was not
// told. Noticed by review32-answers. Now the "Done" says so, with the earlier send's time and what
// to check. Through the built channel server over stdio, as a host runs it. And (review39-chaos,
// bench/chaos.ts seed 1) a repeat that ends unknown too said only "The outcome is unknown", as a
// first attempt's does, though both may have gone out; now it says the customer may have it twice.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LaunchedServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let sandbox: Sandbox;
let server: LaunchedServer;
const dir = mkdtempSync(join(tmpdir(), 'ungated-repeat-'));
beforeAll(async () => {
  sandbox = await startSandbox();
  server = await launchChannel(sandbox, dir, 'none');
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a repeat of a write whose first outcome is unknown is done, and says the customer may have it twice', async () => {
  const params = { msisdn: '6281377700001', message: 'Pesanan Anda sudah dikirim' };
  sandbox.injectFault({ kind: 'reset-after', operationId: SEND, times: 1 });
  const first = await callSend(server, { params });
  expect(structuredOf(first)).toMatchObject({ outcome: 'unknown' });
  const repeat = await callSend(server, { params });
  expect(repeat.isError, textOf(repeat)).toBeFalsy();
  expect(countCarriedOut(sandbox, SEND)).toBe(2);
  expect(textOf(repeat)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
  expect(textOf(repeat)).toMatch(
    /Exactly this channel\.whatsapp\.send was also sent by this server at \S+, and whether that one was carried out is unknown: the customer may now have it twice/,
  );
  expect((structuredOf(repeat) as { notes?: string[] }).notes?.join(' ')).toMatch(/may now have it twice/);
});

it('a write sent once says nothing of the kind', async () => {
  const done = await callSend(server, { params: { msisdn: '6281377700002', message: 'Terima kasih' } });
  expect(textOf(done)).not.toMatch(/twice/);
});

it('a repeat of a write of unknown outcome that ends unknown too says the customer may have it twice', async () => {
  const params = { msisdn: '6281377700011', message: 'Pesanan Anda sudah dikirim' };
  sandbox.clearLogs();
  sandbox.injectFault({ kind: 'reset-after', operationId: SEND, times: 2 });
  const first = await callSend(server, { params });
  expect(structuredOf(first)).toMatchObject({ outcome: 'unknown' });
  expect(textOf(first)).not.toMatch(/twice/);
  const repeat = await callSend(server, { params });
  expect(countCarriedOut(sandbox, SEND)).toBe(2);
  expect(structuredOf(repeat)).toMatchObject({ outcome: 'unknown' });
  expect(textOf(repeat)).toMatch(
    /Exactly this channel\.whatsapp\.send was also sent by this server at \S+, and whether that one was carried out is unknown: the customer may now have it twice/,
  );
});

it('a repeat the API refused says nothing of twice (this attempt did nothing)', async () => {
  const params = { msisdn: '6281377700012', message: 'Terima kasih' };
  sandbox.injectFault({ kind: 'reset-after', operationId: SEND, times: 1 });
  await callSend(server, { params });
  sandbox.injectFault({ kind: 'status', status: 400, operationId: SEND, times: 1 });
  const repeat = await callSend(server, { params });
  expect(structuredOf(repeat)).toMatchObject({ outcome: 'refused' });
  expect(textOf(repeat)).not.toMatch(/may now have it twice/);
});
