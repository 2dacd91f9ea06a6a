// Review 22b: a confirmed write's shared mark when the real redis-server stalls as the mark is
// claimed (SIGSTOP). review9 took back a mark whose claim's reply was lost with one 'refused'
// settle sent at once, and tested it with a client that failed once and then answered. A real
// stall longer than the command timeout drops the connection, so that settle went out while the
// connection was being made again and failed; Redis then applied the claim it held. The call was
// told, truly, that nothing was sent, yet for 3 minutes (the mark's lease) every preview of exactly
// this write said "still being sent by this server" and offered no token, and after that
// "its outcome is unknown" for 30 minutes, for a message never sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_WRITE } from '../packages/http/src/redis-guard-store.js';
import { structuredOf, textOf } from './helpers.js';
import { startStallBench, type StallBench } from './review22b-stalling.js';

let bench: StallBench;
beforeAll(async () => {
  bench = await startStallBench();
}, 30_000);
afterAll(async () => {
  await bench?.close();
});

const tokenOf = (result: unknown) => structuredOf(result as never).confirmationToken as string | undefined;

describe('review22b: a shared mark whose claim Redis held through a stall', () => {
  it('is taken back: the write is previewed again with a token, and sent once', async () => {
    const { server, stalling, storeAnswers } = await bench.replica({ ENGAGE_CONFIRM: 'destructive' });
    const params = { msisdn: '081234567890', message: 'review22b claim stalled' };
    const first = tokenOf(await server.call('channel.whatsapp.send', params));
    expect(first).toBeDefined();
    stalling.stallOn(CLAIM_WRITE.sha);
    const stalled = await server.call('channel.whatsapp.send', params, { confirmationToken: first });
    expect(stalled.isError, textOf(stalled)).toBe(true);
    expect(textOf(stalled)).toMatch(/nothing was sent/);
    await stalling.resumed;
    await storeAnswers();
    const preview = await server.call('channel.whatsapp.send', params);
    expect(textOf(preview)).not.toMatch(/still being sent|unknown/);
    const again = tokenOf(preview);
    expect(again, textOf(preview)).toBeDefined();
    const sent = await server.call('channel.whatsapp.send', params, { confirmationToken: again });
    expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
    expect(bench.sendsOf(params.message)).toBe(1);
  });
});
