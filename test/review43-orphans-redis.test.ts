// Review 43 (D5), remote mode: the audit line of a write whose replica stopped while the write was
// at the API. The line is appended after the answer, so a replica killed mid-send left none. Now a
// claim keeps the line but for its outcome with its mark in Redis (the same script), its settle
// drops it, and a mark whose lease ran out gives its line once, as `unknown` (`orphaned`): to the
// next claim of the same write, or to any replica's look at the marks watched (its first claim).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { remoteAuditSecret, verifyAuditLines } from '../shared/src/call/audit.js';
import { NO_YES, WRITE_MARK_LEASE_MS } from '../shared/src/call/shared-mark.js';
import { pendingAudit } from './helpers/pending-audit.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');
let redis: RedisServer;
let client: RedisClient;
beforeAll(async () => {
  redis = await startRedis();
  client = await connectRedis(redis.url);
});
afterAll(async () => {
  await client?.close();
  await redis?.stop();
});

let prefixes = 0;
/** A replica of its own (a fresh store: its first claim looks for orphans), on keys of one test. */
const replicaOf = (prefix: string) => new RedisGuardStore(client, { stateSecret: STATE_SECRET, callerClock: true, prefix });
const pending = (id: string, at: number) => pendingAudit('fingerprint-0001', id, at);
const lapsed = () => Date.now() - WRITE_MARK_LEASE_MS - 1_000;

async function record(prefix: string): Promise<string[]> {
  return (await client.command(['LRANGE', auditListKey('fingerprint-0001', prefix), 0, -1])) as string[];
}
const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('review43: a write whose replica stopped with it at the API, in remote mode', () => {
  it('gets one unknown line when other replicas first claim, however many; the chain verifies', async () => {
    const prefix = `t${++prefixes}:`;
    const at = lapsed();
    expect(await replicaOf(prefix).claimWrite('w1', 'dead', NO_YES, at, at, pending('c-1', at))).toBeUndefined();
    const now = Date.now();
    await replicaOf(prefix).claimWrite('w2', 'second', NO_YES, now, now, pending('c-2', now));
    await replicaOf(prefix).claimWrite('w3', 'third', NO_YES, now, now, pending('c-3', now));
    const lines = await record(prefix);
    expect(parsed(lines)).toEqual([expect.objectContaining({ ...pending('c-1', at), outcome: 'unknown', orphaned: true, seq: 1 })]);
    expect(verifyAuditLines(remoteAuditSecret(STATE_SECRET), lines)).toEqual({ ok: true, lines: 1 });
  });

  it('a mark still renewed, or settled, gives no line', async () => {
    const prefix = `t${++prefixes}:`;
    const now = Date.now();
    await replicaOf(prefix).claimWrite('live', 'alive', NO_YES, now, now, pending('c-1', now));
    const at = lapsed();
    const owner = replicaOf(prefix);
    await owner.claimWrite('settled', 'owner', NO_YES, at, at, pending('c-2', at));
    await owner.settleWrite('settled', 'owner', 'done');
    await replicaOf(prefix).claimWrite('other', 'other', NO_YES, now, now, pending('c-3', now));
    expect(await record(prefix)).toEqual([]);
    expect(await client.command(['HGET', `${prefix}guard:write:settled`, 'audit'])).toBeNull();
  });

  it('the same write claimed again on a replica that already looked: its orphan line once, its new mark keeping its own', async () => {
    const prefix = `t${++prefixes}:`;
    const survivor = replicaOf(prefix);
    const first = Date.now();
    await survivor.claimWrite('warm-up', 'warm', NO_YES, first, first, pending('c-0', first));
    await survivor.settleWrite('warm-up', 'warm', 'done');
    const at = lapsed();
    await replicaOf(prefix).claimWrite('w', 'dead', NO_YES, at, at, pending('c-1', at));
    const now = Date.now();
    expect(await survivor.claimWrite('w', 'again', NO_YES, now, now, pending('c-1', now))).toBeUndefined();
    // Claimed once more while that mark is at the API: refused, and nothing more is appended.
    expect((await replicaOf(prefix).claimWrite('w', 'third', NO_YES, now, now, pending('c-1', now)))?.outcome).toBe('in-flight');
    expect(parsed(await record(prefix)).map((line) => [line.time, line.outcome, line.orphaned])).toEqual([[new Date(at).toISOString(), 'unknown', true]]);
    expect(JSON.parse((await client.command(['HGET', `${prefix}guard:write:w`, 'audit'])) as string).time).toBe(new Date(now).toISOString());
  });
});
