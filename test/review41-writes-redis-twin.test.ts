// Replicas on Redis, a write that needs no yes asked on two of them at about the same moment
// (bench/chaos.ts seed 7 found the stdio half, bd9cbba fixed it for the state folder only):
// - the other replica's identical write began and was carried out between this one's read of Redis
//   and its claim: the read saw nothing, so its "Done" was plain, though the customer now has it twice;
// - the other's was read as still at the API and then refused (nothing sent) before the claim: its
//   "Done" said the customer may now have it twice, which cannot be.
// The claim's own step now gives back the attempt it replaced (CLAIM_WRITE, claimedOver), as the
// file store's does. The races are made exact by a store that runs the other replica's steps first.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, textOf } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const SEND = 'channel.whatsapp.send';
const STATE_SECRET = new TextEncoder().encode('review41-writes-redis-twin-state-secret-0123456789');
let sandbox: Sandbox;
let redis: RedisServer;
let mine: RedisClient;
let theirs: RedisClient;
beforeAll(async () => {
  [sandbox, redis] = await Promise.all([startSandbox(), startRedis()]);
  [mine, theirs] = await Promise.all([connectRedis(redis.url), connectRedis(redis.url)]);
}, 60_000);
afterAll(async () => {
  await Promise.all([mine?.close(), theirs?.close()]);
  await Promise.all([sandbox?.close(), redis?.stop()]);
});

/** This replica's store; before its first claim (after its read) the other replica claims the same write and ends it `ending`. */
class OtherEndsBeforeClaim extends RedisGuardStore {
  private seen = false;
  constructor(
    private readonly other: RedisGuardStore,
    private readonly ending: 'done' | 'refused',
    private readonly readInFlight: boolean,
  ) {
    super(mine, { stateSecret: STATE_SECRET });
  }
  override async lastSentWrite(write: string, now: number) {
    if (this.readInFlight && !this.seen) {
      this.seen = true;
      await this.other.claimWrite(write, 'the-other-replica', NO_YES, now - 20);
    }
    return super.lastSentWrite(write, now);
  }
  override async claimWrite(write: string, id: string, approvedAt: number, now: number) {
    if (!this.readInFlight && !this.seen) {
      this.seen = true;
      await this.other.claimWrite(write, 'the-other-replica', NO_YES, now - 20);
    }
    if (id !== 'the-other-replica') await this.other.settleWrite(write, 'the-other-replica', this.ending).catch(() => undefined);
    return super.claimWrite(write, id, approvedAt, now);
  }
}

async function sendOn(store: RedisGuardStore, msisdn: string) {
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => store } });
  try {
    return await server.call(SEND, { msisdn, message: 'Pesanan Anda sudah dikirim' });
  } finally {
    await server.close();
  }
}

it('a twin carried out on another replica between the read and the claim is told: the customer now has it twice', async () => {
  const other = new RedisGuardStore(theirs, { stateSecret: STATE_SECRET });
  const done = await sendOn(new OtherEndsBeforeClaim(other, 'done', false), '6281377700051');
  expect(textOf(done)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
  expect(textOf(done)).toMatch(/Exactly this channel\.whatsapp\.send was also sent by .* and it was carried out: the customer now has it twice/);
});

it('a twin read as at the API on another replica and refused before the claim is not told: nothing went out twice', async () => {
  const before = countCarriedOut(sandbox, SEND);
  const other = new RedisGuardStore(theirs, { stateSecret: STATE_SECRET });
  const done = await sendOn(new OtherEndsBeforeClaim(other, 'refused', true), '6281377700052');
  expect(countCarriedOut(sandbox, SEND)).toBe(before + 1);
  expect(textOf(done)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
  expect(textOf(done)).not.toMatch(/also sent|twice/);
});
