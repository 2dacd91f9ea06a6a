// review38: a write's unread note in Redis, taken by another replica's repeat (that call was told
// the write was carried out, and sent nothing), came back when Redis lost what it held: the
// replica that settled the write put its mark back with the note (it never learnt the note was
// taken), so the user's next deliberate repeat was swallowed too, and the model told a second
// time of an answer it had already been given. A replica whose claim took the note now puts the
// attempt back as told, whichever replica puts its mark back first.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, STATE_LOST } from '../packages/http/src/redis-guard-store.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const QUIET_MS = 1_000;
const { clients } = redisPerFile(3);
let writeNumber = 0;
const freshWrite = () => `told-elsewhere-write-${++writeNumber}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const replica = (index: number) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS });

/** Replica A carries out the write for a host that never read it; replica B's repeat is told (nothing sent). */
async function toldOnB(write: string) {
  const [a, b] = [replica(0), replica(1)];
  expect(await a.claimWrite(write, 'owner-a', NO_YES, Date.now())).toBeUndefined();
  await a.settleWrite(write, 'owner-a', 'done', true);
  expect(await b.claimWrite(write, 'owner-b', NO_YES, Date.now())).toMatchObject({ outcome: 'done', unread: true });
  return { a, b };
}

/** Redis emptied; B's next claim finds the loss (claims paused), then the quiet passes. */
async function loseRedis(b: RedisGuardStore, write: string) {
  await clients[2]!.command(['FLUSHALL']);
  await expect(b.claimWrite(write, 'owner-b-paused', NO_YES, Date.now())).rejects.toThrow(STATE_LOST);
  await sleep(QUIET_MS + 50);
}

describe('an unread note another replica took', () => {
  it('stays taken after Redis lost what it held: the next repeat is sent', async () => {
    const write = freshWrite();
    const { b } = await toldOnB(write);
    await loseRedis(b, write);
    expect(await b.claimWrite(write, 'owner-b-again', NO_YES, Date.now())).toBeUndefined();
  });

  it('stays taken when the settling replica puts its mark back first', async () => {
    const write = freshWrite();
    const { a, b } = await toldOnB(write);
    await clients[2]!.command(['FLUSHALL']);
    // A finds the loss first and puts its mark back, the note with it; then B finds it and puts back what it told.
    await expect(a.claimWrite(freshWrite(), 'owner-a-paused', NO_YES, Date.now())).rejects.toThrow(STATE_LOST);
    await expect(b.claimWrite(write, 'owner-b-paused', NO_YES, Date.now())).rejects.toThrow(STATE_LOST);
    await sleep(QUIET_MS + 50);
    expect(await b.claimWrite(write, 'owner-b-again', NO_YES, Date.now())).toBeUndefined();
  });
});

describe("an unread note another replica gave (an idempotency key's first answer told of it)", () => {
  it('stays taken after Redis lost what it held', async () => {
    const write = freshWrite();
    const [a, b] = [replica(0), replica(1)];
    expect(await a.claimWrite(write, 'owner-a', NO_YES, Date.now())).toBeUndefined();
    await a.settleWrite(write, 'owner-a', 'done', true);
    await b.lastSentWrite(freshWrite(), Date.now()); // B has used Redis (so it knows a loss when it sees one)
    expect(await b.takeUnread(write)).toBe(true);
    await loseRedis(b, write);
    expect(await b.claimWrite(write, 'owner-b-again', NO_YES, Date.now())).toBeUndefined();
  });
});
