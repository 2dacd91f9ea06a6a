// Review 34 (calls), attacking cfd388f: a write that needs no yes, repeated after its first outcome
// was unknown, says "the customer may now have it twice". Attacked: the repeat made by another
// stdio server on the same state directory (a second host window, or this server after a restart),
// which the shared state directory tells of the unknown attempt (its preview would name it).
// Found: the second server answered a plain "Done" (claim in stages.ts read only this process's
// journal). claim now reads the write's last attempt on any server sharing the store.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LaunchedServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let sandbox: Sandbox;
let first: LaunchedServer;
let second: LaunchedServer;
const dir = mkdtempSync(join(tmpdir(), 'review34-unknown-shared-'));
beforeAll(async () => {
  sandbox = await startSandbox();
  [first, second] = await Promise.all([launchChannel(sandbox, dir, 'none'), launchChannel(sandbox, dir, 'none')]);
}, 60_000);
afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('the repeat by another server on the state directory says the customer may have it twice', async () => {
  const params = { msisdn: '6281377700031', message: 'Pesanan Anda sudah dikirim' };
  sandbox.injectFault({ kind: 'reset-after', operationId: SEND, times: 1 });
  expect(structuredOf(await callSend(first, { params }))).toMatchObject({ outcome: 'unknown' });
  const repeat = await callSend(second, { params });
  expect(repeat.isError, textOf(repeat)).toBeFalsy();
  expect(countCarriedOut(sandbox, SEND)).toBe(2);
  expect(textOf(repeat)).toMatch(/whether that one was carried out is unknown: the customer may now have it twice/);
});
