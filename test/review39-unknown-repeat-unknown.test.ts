// A write that needs no yes, repeated after its first attempt ended with an unknown outcome, and the
// repeat ending unknown too (the API reset the connection after doing the work, twice): the repeat's
// answer said only "The outcome is unknown: … may have been carried out", as a first attempt's does,
// though this server had sent exactly the same write moments before: both went out, and the model
// was not told the customer may have it twice. Found by bench/chaos.ts (seed 1, stdio servers with
// ENGAGE_CONFIRM=none). A repeat's "Done" already said so; now its unknown outcome does too. Through
// the built channel server over stdio, as a host runs it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LaunchedServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { SEND, callSend, launchChannel } from './helpers/stdio-channel.js';

let sandbox: Sandbox;
let server: LaunchedServer;
const dir = mkdtempSync(join(tmpdir(), 'unknown-repeat-unknown-'));
beforeAll(async () => {
  sandbox = await startSandbox();
  server = await launchChannel(sandbox, dir, 'none');
});
afterAll(async () => {
  await server?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a repeat of a write of unknown outcome that ends unknown too says the customer may have it twice', async () => {
  const params = { msisdn: '6281377700011', message: 'Pesanan Anda sudah dikirim' };
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
