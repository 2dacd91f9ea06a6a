// review22c: a write's first answer that Redis did not take (its SETTLE lost with the connection)
// is given again in the background (review22b's Owed), but to whichever reservation holds the key
// by then. When Redis lost the key meanwhile (a restart without persistence, a failover to a
// replica the reservation had not reached, FLUSHALL), another call could reserve the same key for
// another write, still on its way, and was given the first write's answer: every later call with
// that key and the second write's params was told "carried out", with the first write's answer,
// for a write that was still being sent, or that was then refused and never sent. The answer is
// now given only to the reservation it was for (its owner's id).
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, SETTLE } from '../packages/http/src/redis-guard-store.js';
import { until } from './helpers.js';
import { STATE_SECRET, redisPerFile } from './review22b-stalling.js';

const { client } = redisPerFile();

const reply = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], structuredContent: { outcome: 'done', text } });

describe('review22c: a first answer given again goes to its own reservation only', () => {
  it('after Redis lost the key, another write reserving it is not given the first write’s answer', async () => {
    const real = await client();
    let dropSettle = false;
    let settlesAnswered = 0;
    // Replica 1: its SETTLE is lost with the connection (never reaches Redis).
    const lossy: RedisClient = {
      async command(args) {
        const isSettle = args[1] === SETTLE.sha || args[1] === SETTLE.source;
        if (dropSettle && isSettle) {
          dropSettle = false;
          throw new Error('connection lost');
        }
        const answer = await real.command(args);
        if (isSettle) settlesAnswered += 1;
        return answer;
      },
      close: () => real.close(),
    };
    const replica1 = new RedisGuardStore(lossy, { stateSecret: STATE_SECRET });
    const replica2 = new RedisGuardStore(await client(), { stateSecret: STATE_SECRET });
    const key = 'review22c-settle-owner';
    const expiresAt = Date.now() + 60_000;
    expect(await replica1.reserve(key, { operationId: 'channel.whatsapp.send', digest: 'first', at: Date.now() }, expiresAt)).toBeUndefined();
    dropSettle = true;
    await expect(replica1.settle(key, reply('first write sent'))).rejects.toThrow();
    // Redis loses its data (a restart without persistence); a second write reserves the key on replica 2.
    await real.command(['FLUSHALL']);
    expect(await replica2.lookup(key)).toBeUndefined();
    expect(await replica2.reserve(key, { operationId: 'channel.whatsapp.send', digest: 'second', at: Date.now() }, expiresAt)).toBeUndefined();
    // Replica 1's answer, given again in the background (from 100 ms), has reached Redis.
    await until("replica 1's SETTLE given again", () => settlesAnswered > 0);
    const held = await replica2.lookup(key);
    expect(held?.digest).toBe('second');
    expect(held?.reply, 'the second write, still on its way, holds the first write’s answer').toBeUndefined();
    // The second write is refused (nothing sent): its key is given back, so a retry may send it.
    await replica2.settle(key, undefined);
    expect(await replica2.lookup(key)).toBeUndefined();
  });

  it('a first answer lost with the connection is still given to its own reservation', async () => {
    const real = await client();
    let dropSettle = false;
    const lossy: RedisClient = {
      async command(args) {
        if (dropSettle && (args[1] === SETTLE.sha || args[1] === SETTLE.source)) {
          dropSettle = false;
          throw new Error('connection lost');
        }
        return real.command(args);
      },
      close: () => real.close(),
    };
    const replica1 = new RedisGuardStore(lossy, { stateSecret: STATE_SECRET });
    const replica2 = new RedisGuardStore(await client(), { stateSecret: STATE_SECRET });
    const key = 'review22c-settle-own';
    expect(await replica1.reserve(key, { operationId: 'channel.whatsapp.send', digest: 'first', at: Date.now() }, Date.now() + 60_000)).toBeUndefined();
    dropSettle = true;
    await expect(replica1.settle(key, reply('first write sent'))).rejects.toThrow();
    // Given again in the background (from 100 ms): waited for, not a fixed second.
    await until('the first answer given again', async () => (await replica2.lookup(key))?.reply !== undefined);
    expect((await replica2.lookup(key))?.reply).toEqual(reply('first write sent'));
  });
});
