// review9 (hostile review of b620a0f): the shared mark of a write in flight has no owner.
// Now: each mark has an owner, renewed while its write is out (shared-mark.ts, a lease), and only
// the owner settles it. What the review found:
// 1. WRITE_IN_FLIGHT_MS (10 min) was shorter than a write may legitimately be in flight
//    (ENGAGE_TIMEOUT_MS up to 600 s per attempt, ENGAGE_MAX_RETRY_WAIT_S up to 3600 s of pacing
//    before each of up to 4 attempts): a write still on its way on replica A is shown to replica B
//    as "unknown", and a yes given to that preview is claimed while A's write is still in flight.
// 2. SETTLE_WRITE settles whatever attempt is in flight now, not its own: A's late settle
//    rewrites or erases B's in-flight mark, and a third claim passes while B is still on its way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { WRITE_MARK_LEASE_MS, WRITE_MARK_RENEW_MS } from '../shared/src/call/shared-mark.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');
let redis: RedisServer;
let client: RedisClient;
let store: RedisGuardStore;
beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url);
  store = new RedisGuardStore(client, { stateSecret: STATE_SECRET, callerClock: true });
});
afterAll(async () => {
  await client?.close();
  await redis?.stop();
});

const T = 1_800_000_000_000;
const HOUR = 60 * 60 * 1000;
let n = 0;
const fresh = () => `review9-write-${++n}`;

describe('review9: a shared in-flight mark and its settle', () => {
  it('a write its replica keeps renewing stays in flight however long it takes (ENGAGE_TIMEOUT_MS=600000, pacing waits)', async () => {
    const write = fresh();
    expect(await store.claimWrite(write, 'A', T - 1, T)).toBeUndefined();
    for (let at = T + WRITE_MARK_RENEW_MS; at <= T + HOUR; at += WRITE_MARK_RENEW_MS) await store.renewWrite(write, 'A', at);
    expect(await store.lastSentWrite(write, T + HOUR + 1)).toEqual({ outcome: 'in-flight', at: T });
    expect(await store.claimWrite(write, 'B', T + HOUR, T + HOUR + 1)).toEqual({ outcome: 'in-flight', at: T });
  });

  it("A's late 'refused' settle does not erase B's in-flight mark", async () => {
    const write = fresh();
    await store.claimWrite(write, 'A', T - 1, T); // A, which then stops renewing (its replica stalled)
    const later = T + WRITE_MARK_LEASE_MS + 1;
    expect(await store.claimWrite(write, 'B', T, later + 1)).toEqual({ outcome: 'unknown', at: T }); // a yes given before A's attempt is refused
    expect(await store.claimWrite(write, 'B', later + 1, later + 1)).toBeUndefined(); // B, after a preview that said "unknown"
    await store.settleWrite(write, 'A', 'refused');
    expect(await store.lastSentWrite(write, later + 2)).toEqual({ outcome: 'in-flight', at: later + 1 });
    expect(await store.claimWrite(write, 'C', later + 2, later + 3)).toEqual({ outcome: 'in-flight', at: later + 1 });
  });

  it("A's late 'done' settle does not mark B's attempt done while B is still in flight", async () => {
    const write = fresh();
    await store.claimWrite(write, 'A', T - 1, T);
    const later = T + WRITE_MARK_LEASE_MS + 1;
    await store.claimWrite(write, 'B', later + 1, later + 1);
    await store.settleWrite(write, 'A', 'done');
    expect(await store.claimWrite(write, 'C', later + 5, later + 6)).toEqual({ outcome: 'in-flight', at: later + 1 });
  });
});
