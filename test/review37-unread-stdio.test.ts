// review37: a write that needs no yes, carried out while its host had quit (stdin closed mid-send:
// the SDK aborts the call, the server waits for the write, then exits). Its answer was kept in
// that process's memory only (undelivered.ts), so the next server started on the same state
// directory sent the same write again with a plain "Done": the customer had it twice, the model
// was told nothing. The state directory now notes the write's answer as never read, and the next
// identical call on any server sharing it is told so and sends nothing, once.
import { expect, it } from 'vitest';
import type { LaunchedServer } from '../packages/sandbox/src/index.js';
import { callSend, channelsOnStateFoldersPerFile, SEND } from './helpers/stdio-channel.js';
import { countCarriedOut, requestsAtApi, structuredOf, textOf, until } from './helpers.js';

const file = channelsOnStateFoldersPerFile('review37-unread-stdio');

it('the next server on the state directory does not send again a write whose host quit mid-send, and says so', { timeout: 60_000 }, async () => {
  const dir = file.stateDir();
  const params = { msisdn: '6281377700071', message: 'Pesanan 9001 dikirim' };
  const carried = countCarriedOut(file.sandbox, SEND);
  await file.quitMidSend(dir, { params });
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);

  const next = await file.launched(dir);
  const repeat = await callSend(next, { params });
  expect(countCarriedOut(file.sandbox, SEND) - carried, textOf(repeat)).toBe(1);
  expect(repeat.isError, textOf(repeat)).toBeFalsy();
  expect(structuredOf(repeat)).toMatchObject({ outcome: 'done' });
  expect(textOf(repeat)).toMatch(/sent by this server or another one sharing its state directory .* at \d{4}-\d\d-\d\dT/);
  expect(textOf(repeat)).toMatch(/carried out: its answer never reached you, and nothing was sent again/);

  // Told once: the same call after that is the user's to mean, and is sent.
  const meant = await callSend(next, { params });
  expect(textOf(meant)).not.toMatch(/never reached you/);
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(2);
});

it('two servers repeating it at once: one is told, the other sends (the note is taken once)', { timeout: 60_000 }, async () => {
  const dir = file.stateDir();
  const params = { msisdn: '6281377700072', message: 'Pesanan 9002 dikirim' };
  const carried = countCarriedOut(file.sandbox, SEND);
  await file.quitMidSend(dir, { params });
  const [a, b] = await Promise.all([file.launched(dir), file.launched(dir)]);
  const repeats = await Promise.all([callSend(a, { params }), callSend(b, { params })]);
  const told = repeats.filter((repeat) => /never reached you/.test(textOf(repeat)));
  expect(told, repeats.map(textOf).join('\n---\n')).toHaveLength(1);
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(2);
});

it('a write whose answer was read is sent again by the next server, as before', { timeout: 60_000 }, async () => {
  const dir = file.stateDir();
  const params = { msisdn: '6281377700073', message: 'Pesanan 9003 dikirim' };
  const carried = countCarriedOut(file.sandbox, SEND);
  const first = await file.launched(dir);
  expect(structuredOf(await callSend(first, { params }))).toMatchObject({ outcome: 'done' });
  const next = await file.launched(dir);
  const again = await callSend(next, { params });
  expect(textOf(again)).not.toMatch(/never reached you/);
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(2);
});

/** The host of `server` cancels the send while it is at the API; the server stays up, its answer kept in its memory. */
async function cancelMidSend(server: LaunchedServer, params: Record<string, unknown>, carried: number): Promise<void> {
  file.sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 600 });
  const before = requestsAtApi(file.sandbox, SEND);
  const host = new AbortController();
  const pending = server.client
    .callTool({ name: 'channel_action', arguments: { operationId: SEND, params } }, undefined, { signal: host.signal })
    .catch(() => undefined);
  await until('the send at the API', () => requestsAtApi(file.sandbox, SEND) > before);
  host.abort();
  await pending;
  await until('the send carried out', () => countCarriedOut(file.sandbox, SEND) - carried === 1);
}

/** The same call until the first has ended at its server (until then it is refused as still being sent). */
async function repeatOnceEnded(server: LaunchedServer, params: Record<string, unknown>) {
  let repeat = await callSend(server, { params });
  while (/still being sent/.test(textOf(repeat))) repeat = await callSend(server, { params });
  return repeat;
}

it('the server that kept the answer in memory gives it, and the note in the state directory goes with it', { timeout: 60_000 }, async () => {
  const dir = file.stateDir();
  const params = { msisdn: '6281377700074', message: 'Pesanan 9004 dikirim' };
  const carried = countCarriedOut(file.sandbox, SEND);
  const [first, other] = await Promise.all([file.launched(dir), file.launched(dir)]);
  await cancelMidSend(first, params, carried);
  const repeat = await repeatOnceEnded(first, params);
  // This server's own answer, with its data.
  expect(textOf(repeat)).toMatch(/that call's answer, which never reached you, is repeated below/);
  const elsewhere = await callSend(other, { params });
  expect(textOf(elsewhere)).not.toMatch(/never reached you/);
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(2);
});

it('told on another server first, the server that kept the answer sends the next call', { timeout: 60_000 }, async () => {
  const dir = file.stateDir();
  const params = { msisdn: '6281377700075', message: 'Pesanan 9005 dikirim' };
  const carried = countCarriedOut(file.sandbox, SEND);
  const [first, other] = await Promise.all([file.launched(dir), file.launched(dir)]);
  await cancelMidSend(first, params, carried);
  const told = await repeatOnceEnded(other, params);
  expect(textOf(told)).toMatch(/its answer never reached you, and nothing was sent again/);
  const meant = await callSend(first, { params });
  expect(textOf(meant)).not.toMatch(/never reached you/);
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(2);
});
