// The remote half of review45-twin-late-mark: replica B's claim dates its attempt (the journal's time)
// well before its mark reaches Redis, and replica A previews and confirms the same write in between.
// On Redis a mark is dated by Redis's clock in the claim's own step (CLAIM_WRITE), and a preview's
// read is one step too (LAST_WRITE), so A's yes, dated before its read, never stands after B's mark:
// it sends nothing. B's claim time is set ten seconds back (past WRITE_CLOCK_SKEW_MS), as a claim that
// waited that long before its step would have it, so the margin for replicas' clocks is not what refuses.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore, WRITE_CLOCK_SKEW_MS } from '../packages/http/src/redis-guard-store.js';
import type { PendingAudit } from '../shared/src/call/guard-store.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf, until } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const SEND = 'channel.whatsapp.send';
const STATE_SECRET = new TextEncoder().encode('review45-twin-late-mark-redis-state-secret-0123456');
let sandbox: Sandbox;
let redis: RedisServer;
let clients: RedisClient[];
beforeAll(async () => {
  [sandbox, redis] = await Promise.all([startSandbox(), startRedis()]);
  clients = await Promise.all([connectRedis(redis.url), connectRedis(redis.url)]);
}, 60_000);
afterAll(async () => {
  await Promise.all((clients ?? []).map((client) => client.close()));
  await Promise.all([sandbox?.close(), redis?.stop()]);
});

/** Replica B's store: its claim, dated long before, reaches Redis once the test lets it. */
class ClaimLate extends RedisGuardStore {
  claimedWith: number | undefined;
  goOn: () => void = () => undefined;
  private readonly going = new Promise<void>((resolve) => {
    this.goOn = resolve;
  });
  override async claimWrite(write: string, id: string, approvedAt: number, now: number, clockNow?: number, audit?: PendingAudit) {
    this.claimedWith = now - 2 * WRITE_CLOCK_SKEW_MS;
    await this.going;
    return super.claimWrite(write, id, approvedAt, this.claimedWith, clockNow, audit);
  }
}

it('a replica whose preview came while another replica waited to mark the same write never sends it again on that yes', async () => {
  const storeA = new RedisGuardStore(clients[0]!, { stateSecret: STATE_SECRET });
  const storeB = new ClaimLate(clients[1]!, { stateSecret: STATE_SECRET });
  const replicaA = await inProcess(DOMAINS.channel!, sandbox, { server: { guardStore: () => storeA } });
  const replicaB = await inProcess(DOMAINS.channel!, sandbox, { server: { guardStore: () => storeB } });
  try {
    const params = { msisdn: '6281377700046', message: 'Pesanan Anda sudah dikirim' };
    const tokenB = structuredOf(await replicaB.call(SEND, params)).confirmationToken as string;
    const confirmedB = replicaB.call(SEND, params, { confirmationToken: tokenB });
    await until("B's claim took its time", () => storeB.claimedWith !== undefined);
    const previewA = await replicaA.call(SEND, params);
    expect(textOf(previewA)).not.toMatch(/being sent right now|already sent/);
    storeB.goOn();
    expect(textOf(await confirmedB)).toMatch(/^Done: /);
    const tokenA = structuredOf(previewA).confirmationToken as string;
    const confirmedA = await replicaA.call(SEND, params, { confirmationToken: tokenA });
    expect(countCarriedOut(sandbox, SEND), textOf(confirmedA)).toBe(1);
    expect(textOf(confirmedA)).not.toMatch(/^Done: /);
  } finally {
    await replicaA.close();
    await replicaB.close();
  }
});
