// Remote mode: Redis lost what it held (restarted empty, flushed) while a write was at the API; its
// replica put the mark back, but without the audit line the claim had kept with it, and outside the
// marks watched for orphans. Had that replica then died with the write, no line at all would have
// been written for a write that may have gone out. Now the mark comes back with its line and is
// watched again: a lapsed one gives its line, as `unknown` and `orphaned`, to the next replica that looks.
import { describe, expect, it } from 'vitest';
import { auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import type { RedisClient } from '../packages/http/src/redis.js';
import type { PendingAudit } from '../shared/src/call/audit.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';
import { until } from './helpers.js';

const QUIET_MS = 600;
const PREFIX = 'restore-line:';
const KEY = 'fingerprint-0003';
const { clients } = redisPerFile(3);
const redis = () => clients[2] as RedisClient;
const replica = (index: number) => new RedisGuardStore(clients[index] as RedisClient, { stateSecret: STATE_SECRET, lossQuietMs: QUIET_MS, prefix: PREFIX });
const pending: PendingAudit = {
  time: new Date().toISOString(),
  key: KEY,
  server: 'engage-mcp-http',
  operationId: 'channel.whatsapp.send',
  paramsDigest: 'digest-restored',
  params: { msisdn: '6281200000000', message: '<12 characters>' },
  confirmation: 'not needed',
};
const writeKey = `${PREFIX}guard:write:w-restored`;

describe('a mark in flight put back after Redis lost it', () => {
  it('keeps its audit line and is watched, so its line is written if its replica dies with it', async () => {
    const sender = replica(0);
    expect(await sender.claimWrite('w-restored', 'sender', NO_YES, Date.now(), Date.now(), pending)).toBeUndefined();
    await redis().command(['FLUSHALL']);
    // The sender's watch of the epoch finds the loss and puts its marks back.
    await until('the mark put back', async () => (await redis().command(['HGET', writeKey, 'outcome'])) === 'in-flight');
    expect(await redis().command(['HGET', writeKey, 'audit'])).toBe(JSON.stringify(pending));
    expect(await redis().command(['ZSCORE', `${PREFIX}guard:orphan-watch`, writeKey])).not.toBeNull();
    // Its replica dies with it: the lease runs out (renewed long ago), and another replica's first claim looks.
    await redis().command(['HSET', writeKey, 'alive', '0']);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS + 50));
    expect(await replica(1).claimWrite('w-other', 'other', NO_YES, Date.now(), Date.now())).toBeUndefined();
    const lines = (await redis().command(['LRANGE', auditListKey(KEY, PREFIX), 0, -1])) as string[];
    expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ ...pending, outcome: 'unknown', orphaned: true })]);
  });
});
