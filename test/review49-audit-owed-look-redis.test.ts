// Remote mode: a replica's look for orphans starts with the lines owed (HSCAN, up to 256), and an
// append of one that Redis did not answer was caught line by line, so the look went on to ask
// Redis once per line owed: on a stalling Redis, a command timeout each, all of it inside the claim
// that looked (the lines are owed exactly when appends failed, so they pile up when Redis is
// flaky). Now a look stops at the first that Redis did not answer; the lines stay owed.
import { describe, expect, it } from 'vitest';
import { RedisUnavailableError, type RedisClient } from '../packages/http/src/redis.js';
import { auditListKey, RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import type { PendingAudit } from '../shared/src/call/audit.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const { clients } = redisPerFile(1);
const redis = () => clients[0] as RedisClient;

/** Answers until the lines owed are read (HSCAN), then stops answering; counts what was asked of it after. */
class StopsAfterScan implements RedisClient {
  stopped = false;
  askedAfter: string[] = [];
  constructor(private readonly real: RedisClient) {}
  async command(args: Array<string | number>): Promise<unknown> {
    if (this.stopped) {
      this.askedAfter.push(String(args[0]));
      throw new RedisUnavailableError('Redis did not answer in time');
    }
    const reply = await this.real.command(args);
    if (args[0] === 'HSCAN') this.stopped = true;
    return reply;
  }
  close() {
    return this.real.close();
  }
}

const kept = (id: string): PendingAudit => ({
  time: new Date().toISOString(),
  key: 'fingerprint-owed',
  server: 'engage-mcp-http',
  operationId: 'contact.delete',
  paramsDigest: `digest-${id}`,
  params: { id },
  confirmation: 'not needed',
});

describe('a look for orphans on a Redis that stops answering', () => {
  it('stops at the first owed line Redis did not answer for, which stay owed', async () => {
    const prefix = 'look1:';
    const owed = `${prefix}guard:orphan-lines`;
    for (let index = 0; index < 20; index++) await redis().command(['HSET', owed, `w${index} dead`, JSON.stringify(kept(`c-${index}`))]);
    const flaky = new StopsAfterScan(redis());
    const store = new RedisGuardStore(flaky, { stateSecret: STATE_SECRET, callerClock: true, prefix });
    const now = Date.now();
    await expect(store.claimWrite('x', 'owner', NO_YES, now, now)).rejects.toThrow(/did not answer/);
    // One owed line asked for, then the claim's own mark script; nothing else.
    expect(flaky.askedAfter).toEqual(['HGET', 'EVALSHA']);
    expect(await redis().command(['HLEN', owed])).toBe(20);
  });

  it('damaged values owed are dropped or left, and neither stops the look nor the claim', async () => {
    const prefix = 'look2:';
    const owed = `${prefix}guard:orphan-lines`;
    // Written as text: nested past what the stack holds to write it again.
    const deep = JSON.stringify(kept('deep')).replace('{"id":"deep"}', `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`);
    const damaged: Array<[string, string]> = [
      ['w-text dead', 'not json'],
      ['w-null dead', 'null'],
      ['w-shape dead', JSON.stringify({ ...kept('shape'), key: 42 })],
      ['w-deep dead', deep],
      ['w-good dead', JSON.stringify(kept('good'))],
    ];
    for (const [field, value] of damaged) await redis().command(['HSET', owed, field, value]);
    const store = new RedisGuardStore(redis(), { stateSecret: STATE_SECRET, callerClock: true, prefix });
    const now = Date.now();
    expect(await store.claimWrite('x', 'owner', NO_YES, now, now)).toBeUndefined();
    const record = ((await redis().command(['LRANGE', auditListKey('fingerprint-owed', prefix), 0, -1])) as string[]).map((line) => JSON.parse(line));
    expect(record).toEqual([expect.objectContaining({ params: { id: 'good' }, outcome: 'unknown', orphaned: true })]);
    // The line that cannot be chained (nested past the stack) waits, owed; the rest are gone.
    expect(await redis().command(['HKEYS', owed])).toEqual(['w-deep dead']);
  });
});
