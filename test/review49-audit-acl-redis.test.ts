// Remote mode on a Redis ACL user with the categories the README listed for the service
// (+@scripting +time +@string +@hash +@list +@keyspace +info): the start-up check passed, but every
// write that keeps its audit line with its mark then failed ("did not answer", nothing sent, on every
// replica), for the orphan watch is a sorted set (ZADD in the claim's script, ZRANGE in a look). The
// check now runs the orphan watch's and the lines owed's commands too, and refuses the start naming
// the categories; with +@sortedset a write is marked with its line and an orphan's line appended.
import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../packages/http/src/redis.js';
import { auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import type { PendingAudit } from '../shared/src/call/audit.js';
import { NO_YES, WRITE_MARK_LEASE_MS } from '../shared/src/call/shared-mark.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

// +ping: the connection's handshake (PING is @connection, which the README's list lacked too).
const README_CATEGORIES = '+@scripting +time +@string +@hash +@list +@keyspace +info +ping';
const KEY = 'fingerprint-acl1';
const userUrl = (url: string, user: string) => url.replace('redis://', `redis://${user}:${user}-password@`);
const { clients } = redisPerFile(
  3,
  { users: [`readme on >readme-password ~* &* ${README_CATEGORIES}`, `sorted on >sorted-password ~* &* ${README_CATEGORIES} +@sortedset`] },
  (url) => [userUrl(url, 'readme'), userUrl(url, 'sorted'), url],
);
const admin = () => clients[2] as RedisClient;
const replicaAs = (client: number) => new RedisGuardStore(clients[client] as RedisClient, { stateSecret: STATE_SECRET, callerClock: true });
const pending = (at: number): PendingAudit => ({
  time: new Date(at).toISOString(),
  key: KEY,
  server: 'engage-mcp-http',
  operationId: 'contact.delete',
  paramsDigest: 'digest-acl',
  params: { id: 'c-acl' },
  confirmation: 'not needed',
});

describe('remote mode on an ACL user', () => {
  it('without the sorted-set commands: the start is refused, naming the categories', async () => {
    const store = replicaAs(0);
    const { refuse } = await store.startupCheck();
    store.close();
    expect(refuse).toMatch(/every write would be refused/);
    expect(refuse).toMatch(/\+@sortedset/);
  });

  it('with them: it starts, marks a write with its line, and appends an orphan’s line', async () => {
    const first = replicaAs(1);
    expect((await first.startupCheck()).refuse).toBeUndefined();
    first.close();
    const at = Date.now() - WRITE_MARK_LEASE_MS - 1_000;
    await replicaAs(1).claimWrite('w', 'dead', NO_YES, at, at, pending(at));
    const now = Date.now();
    await replicaAs(1).claimWrite('w', 'again', NO_YES, now, now, pending(now));
    const lines = ((await admin().command(['LRANGE', auditListKey(KEY), 0, -1])) as string[]).map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ outcome: 'unknown', orphaned: true, seq: 1 })]);
  });

  it('a damaged key of the orphan watch or the lines owed is not taken for a refusal at the start', async () => {
    const prefix = 'damaged:';
    for (const key of ['orphan-watch', 'orphan-lines']) await admin().command(['SET', `${prefix}guard:${key}`, 'not what it should be']);
    const store = new RedisGuardStore(admin(), { stateSecret: STATE_SECRET, prefix });
    expect((await store.startupCheck()).refuse).toBeUndefined();
    store.close();
  });
});
