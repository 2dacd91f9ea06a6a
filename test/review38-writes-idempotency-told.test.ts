// review38: a write that needs no yes, sent with an idempotencyKey and carried out while its host
// had quit, is noted unread in the state directory. The host's retry with the same key on the next
// server is answered the key's first answer (the model is told: carried out, nothing sent again),
// but the note stayed, so the user's later deliberate repeat of the same write was swallowed as
// "its answer never reached you": told twice, and the meant send never went. An idempotency key's
// first answer given now takes the write's note with it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type LaunchedServer, type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { callSend, launchChannel, SEND } from './helpers/stdio-channel.js';
import { countCarriedOut, requestsAtApi, structuredOf, textOf, until } from './helpers.js';

let sandbox: Sandbox;
const root = mkdtempSync(join(tmpdir(), 'review38-idempotency-told-'));
const servers: LaunchedServer[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
}, 30_000);
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

async function launched(dir: string): Promise<LaunchedServer> {
  const server = await launchChannel(sandbox, dir);
  servers.push(server);
  return server;
}

/** The host quits (closes the server's stdin) while the send is at the API; resolves once the server has exited. */
async function quitMidSend(dir: string, args: Record<string, unknown>): Promise<void> {
  const first = await launchChannel(sandbox, dir);
  const before = requestsAtApi(sandbox, SEND);
  sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 600 });
  const pending = callSend(first, args).catch(() => undefined);
  await until('the send at the API', () => requestsAtApi(sandbox, SEND) > before);
  await first.close();
  await pending;
}

it("a key's first answer, given to the retry, takes the unread note: the user's later repeat is sent", { timeout: 60_000 }, async () => {
  const dir = join(root, 'state');
  const params = { msisdn: '6281377700081', message: 'Pesanan 9101 dikirim' };
  const carried = countCarriedOut(sandbox, SEND);
  await quitMidSend(dir, { params, idempotencyKey: 'order-9101' });
  expect(countCarriedOut(sandbox, SEND) - carried).toBe(1);

  const next = await launched(dir);
  const retry = await callSend(next, { params, idempotencyKey: 'order-9101' });
  expect(textOf(retry)).toMatch(/its first answer is repeated below, and nothing was sent again/);
  expect(countCarriedOut(sandbox, SEND) - carried).toBe(1);

  // The model has been told; the same write asked again is the user's to mean, and is sent.
  const meant = await callSend(next, { params });
  expect(textOf(meant)).not.toMatch(/never reached you/);
  expect(structuredOf(meant)).toMatchObject({ outcome: 'done' });
  expect(countCarriedOut(sandbox, SEND) - carried).toBe(2);
});
