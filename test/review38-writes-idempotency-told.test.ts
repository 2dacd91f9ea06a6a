// review38: a write that needs no yes, sent with an idempotencyKey and carried out while its host
// had quit, is noted unread in the state directory. The host's retry with the same key on the next
// server is answered the key's first answer (the model is told: carried out, nothing sent again),
// but the note stayed, so the user's later deliberate repeat of the same write was swallowed as
// "its answer never reached you": told twice, and the meant send never went. An idempotency key's
// first answer given now takes the write's note with it.
import { expect, it } from 'vitest';
import { callSend, channelsOnStateFoldersPerFile, SEND } from './helpers/stdio-channel.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';

const file = channelsOnStateFoldersPerFile('review38-idempotency-told');

it("a key's first answer, given to the retry, takes the unread note: the user's later repeat is sent", { timeout: 60_000 }, async () => {
  const dir = file.stateDir();
  const params = { msisdn: '6281377700081', message: 'Pesanan 9101 dikirim' };
  const carried = countCarriedOut(file.sandbox, SEND);
  await file.quitMidSend(dir, { params, idempotencyKey: 'order-9101' });
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);

  const next = await file.launched(dir);
  const retry = await callSend(next, { params, idempotencyKey: 'order-9101' });
  expect(textOf(retry)).toMatch(/its first answer is repeated below, and nothing was sent again/);
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(1);

  // The model has been told; the same write asked again is the user's to mean, and is sent.
  const meant = await callSend(next, { params });
  expect(textOf(meant)).not.toMatch(/never reached you/);
  expect(structuredOf(meant)).toMatchObject({ outcome: 'done' });
  expect(countCarriedOut(file.sandbox, SEND) - carried).toBe(2);
});
