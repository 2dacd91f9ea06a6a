// review22c: a write that was not carried out gives back what it held, its send-cap count and its
// idempotency key (guardrails.ts releaseHoldings). The count was given back first, and when Redis
// did not take that (the connection dropped, a restart, a failover), the key was never given back:
// for 24 hours every call with that key, on every replica, waited 5 s and answered "still being
// sent, or the server stopped: its outcome is unknown", for a write the API refused (nothing was
// sent), and sent nothing. Review22b's take-back only covered a key whose own command was lost.
// The key is given back whether or not the count was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIVE_BACK } from '../packages/http/src/redis-guard-store.js';
import { structuredOf, textOf } from './helpers.js';
import { startStallBench, type StallBench } from './review22b-stalling.js';

let bench: StallBench;
beforeAll(async () => {
  bench = await startStallBench();
}, 30_000);
afterAll(async () => {
  await bench?.close();
});

describe('review22c: a write the API refused gives back its idempotency key, even when its count could not be given back', () => {
  it('the key is not left "unknown" for a write never sent', { timeout: 30_000 }, async () => {
    const { server, stalling, storeAnswers } = await bench.replica({ ENGAGE_CAP_MESSAGES_PER_DAY: '100' });
    const params = { msisdn: '081234567890', message: 'review22c give back dropped' };
    const args = { idempotencyKey: 'review22c-give-back' };
    bench.sandbox.injectFault({ kind: 'status', status: 400, operationId: 'channel.whatsapp.send' });
    stalling.dropOn(GIVE_BACK.sha);
    const first = await server.call('channel.whatsapp.send', params, args);
    expect(first.isError, textOf(first)).toBe(true);
    expect(bench.sendsOf(params.message)).toBe(0);
    await storeAnswers();
    const again = await server.call('channel.whatsapp.send', params, args);
    expect(textOf(again)).not.toMatch(/unknown/);
    expect(structuredOf(again).outcome, textOf(again)).toBe('done');
    expect(bench.sendsOf(params.message)).toBe(1);
  });
});
