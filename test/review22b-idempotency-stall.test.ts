// Review 22b: an idempotency key when the real redis-server stalls mid-write (SIGSTOP). The call
// is told, truly, that nothing was sent. Before, the key's reservation stayed in Redis all the
// same, without an answer: when the stall outlasted the command timeout the client dropped the
// connection, so the reservation Redis applied late (its reply lost), or the reservation this
// call made and then had to take back (a send cap's count stalled after it) while the connection
// was being made again, was never taken back. For 24 hours every later call with that key, on
// every replica, then waited 5 s and answered "still being sent, or the server stopped: its
// outcome is unknown", for a write that was never sent, and sent nothing.
// Likewise a write carried out whose first answer was kept while Redis dropped the connection: it
// was not written again, and the key answered "unknown" for 24 hours instead of that answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESERVE, SETTLE, TAKE } from '../packages/http/src/redis-guard-store.js';
import { structuredOf, textOf } from './helpers.js';
import { startStallBench, type StallBench } from './review22b-stalling.js';

let bench: StallBench;
beforeAll(async () => {
  bench = await startStallBench();
}, 30_000);
afterAll(async () => {
  await bench?.close();
});

describe('review22b: an idempotency key when Redis stalls mid-write', () => {
  it('a reservation whose reply was lost does not make the key answer "unknown" for a write never sent', async () => {
    const { server, stalling } = await bench.replica({});
    const params = { msisdn: '081234567890', message: 'review22b reserve stalled' };
    const args = { idempotencyKey: 'review22b-reserve' };
    stalling.stallOn(RESERVE.sha);
    const first = await server.call('channel.whatsapp.send', params, args);
    expect(first.isError, textOf(first)).toBe(true);
    expect(textOf(first)).toMatch(/nothing was sent/);
    await stalling.resumed;
    expect(bench.sendsOf(params.message)).toBe(0);
    const again = await bench.whenStoreAnswers(() => server.call('channel.whatsapp.send', params, args), params.message);
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(bench.sendsOf(params.message)).toBe(1);
  });

  it('a reservation given back while the connection is being made again (a cap count stalled) is given back once Redis answers', async () => {
    const { server, stalling } = await bench.replica({ ENGAGE_CAP_MESSAGES_PER_DAY: '100' });
    const params = { msisdn: '081234567890', message: 'review22b take stalled' };
    const args = { idempotencyKey: 'review22b-take' };
    stalling.stallOn(TAKE.sha);
    const first = await server.call('channel.whatsapp.send', params, args);
    expect(first.isError, textOf(first)).toBe(true);
    expect(textOf(first)).toMatch(/nothing was sent/);
    await stalling.resumed;
    expect(bench.sendsOf(params.message)).toBe(0);
    const again = await bench.whenStoreAnswers(() => server.call('channel.whatsapp.send', params, args), params.message);
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(bench.sendsOf(params.message)).toBe(1);
  });
});

describe('review22b: the first answer of an idempotency key when Redis drops the connection as it is kept', () => {
  it('a write carried out whose answer Redis did not take is answered as carried out, not "unknown", once Redis answers', async () => {
    const { server, stalling, storeAnswers } = await bench.replica({});
    const params = { msisdn: '081234567890', message: 'review22b settle stalled' };
    const args = { idempotencyKey: 'review22b-settle' };
    stalling.dropOn(SETTLE.sha);
    const first = await server.call('channel.whatsapp.send', params, args);
    expect(structuredOf(first).outcome, textOf(first)).toBe('done');
    expect(bench.sendsOf(params.message)).toBe(1);
    await storeAnswers();
    const again = await server.call('channel.whatsapp.send', params, args);
    expect(textOf(again)).not.toMatch(/unknown/);
    expect(again.isError, textOf(again)).toBeFalsy();
    expect(bench.sendsOf(params.message)).toBe(1);
  });
});
