// Remote mode: the audit line of a write whose replica died with it at the API (an orphan's) was
// taken from its mark in one step and appended in another, best effort: an append that failed (a
// Redis blip, the finding replica stopped in between) lost the line for good. Now a taken line waits
// in Redis (owed) until a replica's append removes it in the same step that chains it: an append
// that fails leaves it for the next look, and two replicas never append it twice.
import { describe, expect, it } from 'vitest';
import { auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import type { RedisClient } from '../packages/http/src/redis.js';
import { NO_YES, WRITE_MARK_LEASE_MS } from '../shared/src/call/shared-mark.js';
import { pendingAudit } from './helpers/pending-audit.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const KEY = 'fingerprint-0004';
const { clients } = redisPerFile(1);
const redis = () => clients[0] as RedisClient;
let prefixes = 0;
const replicaOf = (prefix: string) => new RedisGuardStore(redis(), { stateSecret: STATE_SECRET, callerClock: true, prefix });
const pending = (id: string, at: number) => pendingAudit(KEY, id, at);
const lapsed = () => Date.now() - WRITE_MARK_LEASE_MS - 1_000;
const record = async (prefix: string) => ((await redis().command(['LRANGE', auditListKey(KEY, prefix), 0, -1])) as string[]).map((line) => JSON.parse(line));

describe('an orphaned write’s line in remote mode', () => {
  it('survives an append that failed, and is appended once by a later look', async () => {
    const prefix = `o${++prefixes}:`;
    const at = lapsed();
    await replicaOf(prefix).claimWrite('w', 'dead', NO_YES, at, at, pending('c-1', at));
    // The audit head is unreadable for a moment (a wrong type stands for any failure of the append).
    const head = `${auditListKey(KEY, prefix)}:head`;
    await redis().command(['SET', head, 'not a hash']);
    const now = Date.now();
    await replicaOf(prefix).claimWrite('w', 'again', NO_YES, now, now, pending('c-1', now));
    expect(await record(prefix)).toEqual([]);
    await redis().command(['DEL', head]);
    // Two more replicas look (each at its first claim): the line is appended, once.
    await replicaOf(prefix).claimWrite('x', 'x', NO_YES, now, now);
    await replicaOf(prefix).claimWrite('y', 'y', NO_YES, now, now);
    expect(await record(prefix)).toEqual([expect.objectContaining({ ...pending('c-1', at), outcome: 'unknown', orphaned: true, seq: 1 })]);
  });
});
