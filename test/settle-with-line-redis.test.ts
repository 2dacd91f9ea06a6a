// Remote mode: a write's audit line was appended after its settle, in a second step, so a replica
// killed between the two left the write settled in Redis with no line at all (its kept line dropped
// by the settle, so no orphan's either). Now the settle appends the line in its own step, as the
// file store's turn does: both or neither. A settle tried again after Redis applied it (its answer
// lost) is told it was appended, so the call appends no second line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { remoteAuditSecret, verifyAuditLines } from '../shared/src/call/audit.js';
import type { AuditEntry } from '../shared/src/call/audit.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { pendingAudit } from './helpers/pending-audit.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');
const KEY = 'fingerprint-0002';
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
const replicaOf = (prefix: string) => new RedisGuardStore(client, { stateSecret: STATE_SECRET, callerClock: true, prefix });
const pending = (id: string, at: number) => pendingAudit(KEY, id, at);
const lineOf = (id: string, at: number): AuditEntry => ({ ...pending(id, at), time: new Date(at + 5).toISOString(), outcome: 'done' });
const record = async (prefix: string) => (await client.command(['LRANGE', auditListKey(KEY, prefix), 0, -1])) as string[];
const markOf = (prefix: string, write: string) => client.command(['HMGET', `${prefix}guard:write:${write}`, 'outcome', 'audit']);

describe('a remote write settled with its audit line', () => {
  it('is settled and its line appended in one step; the chain verifies', async () => {
    const prefix = `s${++prefixes}:`;
    const store = replicaOf(prefix);
    const now = Date.now();
    await store.claimWrite('w', 'owner', NO_YES, now, now, pending('c-1', now));
    expect(await store.settleWrite('w', 'owner', 'done', false, lineOf('c-1', now))).toBe(true);
    const lines = await record(prefix);
    expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ ...lineOf('c-1', now), seq: 1 })]);
    expect(verifyAuditLines(remoteAuditSecret(STATE_SECRET), lines)).toEqual({ ok: true, lines: 1 });
    expect(await markOf(prefix, 'w')).toEqual(['done', null]);
  });

  it('chains after lines another replica appended meanwhile', async () => {
    const prefix = `s${++prefixes}:`;
    const store = replicaOf(prefix);
    const now = Date.now();
    await store.claimWrite('w', 'owner', NO_YES, now, now, pending('c-1', now));
    await replicaOf(prefix).appendAudit(lineOf('c-0', now));
    await replicaOf(prefix).appendAudit(lineOf('c-9', now));
    expect(await store.settleWrite('w', 'owner', 'done', false, lineOf('c-1', now))).toBe(true);
    const lines = await record(prefix);
    expect(lines.map((line) => JSON.parse(line).params.id)).toEqual(['c-0', 'c-9', 'c-1']);
    expect(verifyAuditLines(remoteAuditSecret(STATE_SECRET), lines)).toEqual({ ok: true, lines: 3 });
  });

  it('tried again after Redis applied it: told it was appended, nothing appended twice', async () => {
    const prefix = `s${++prefixes}:`;
    const store = replicaOf(prefix);
    const now = Date.now();
    await store.claimWrite('w', 'owner', NO_YES, now, now, pending('c-1', now));
    expect(await store.settleWrite('w', 'owner', 'done', false, lineOf('c-1', now))).toBe(true);
    expect(await store.settleWrite('w', 'owner', 'done', false, lineOf('c-1', now))).toBe(true);
    expect(await record(prefix)).toHaveLength(1);
  });

  it('a mark no longer its owner’s appends nothing: the call appends the line itself', async () => {
    const prefix = `s${++prefixes}:`;
    const store = replicaOf(prefix);
    const now = Date.now();
    await store.claimWrite('w', 'owner', NO_YES, now, now, pending('c-1', now));
    expect(await store.settleWrite('w', 'someone-else', 'done', false, lineOf('c-1', now))).toBe(false);
    expect(await record(prefix)).toEqual([]);
    expect(await markOf(prefix, 'w')).toEqual(['in-flight', expect.any(String)]);
  });
});
