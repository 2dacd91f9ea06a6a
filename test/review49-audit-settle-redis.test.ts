// Remote mode's audit line at the settle, attacked: a settle with its line that Redis did not take
// is kept by the store (SettleOwed) and the call tries the settle again without the line. That
// retry settled the mark at once, dropping the line kept with it, while the line waited in this
// replica's memory for the store's later redo: a replica killed in between left a write that went
// out settled in Redis with no line at all, and no orphan's line either. So did the store's own redo
// when it kept both (the retry without the line failed too): made side by side, the one without the
// line reached Redis first.
import { describe, expect, it } from 'vitest';
import { RedisUnavailableError, type RedisClient } from '../packages/http/src/redis.js';
import { auditListKey, RedisGuardStore, SETTLE_AND_APPEND, SETTLE_WRITE } from '../packages/http/src/redis-guard-store.js';
import type { AuditEntry, PendingAudit } from '../shared/src/call/audit.js';
import { SettleOwed } from '../shared/src/call/guard-store.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { redisPerFile, STATE_SECRET } from './helpers/redis-per-file.js';

const KEY = 'fingerprint-0049';
const { clients } = redisPerFile(1);
const redis = () => clients[0] as RedisClient;
let prefixes = 0;

/** Fails the first settle that appends a line (not answered); once `killed`, nothing more reaches Redis (its process is gone). */
class FailsSettleOnceThenDies implements RedisClient {
  failed = false;
  killed = false;
  constructor(private readonly real: RedisClient) {}
  async command(args: Array<string | number>): Promise<unknown> {
    if (this.killed) throw new RedisUnavailableError('the replica was killed');
    const script = args[0] === 'EVALSHA' || args[0] === 'EVAL' ? args[1] : undefined;
    if (!this.failed && (script === SETTLE_AND_APPEND.sha || script === SETTLE_AND_APPEND.source)) {
      this.failed = true;
      throw new RedisUnavailableError('Redis did not answer in time');
    }
    return this.real.command(args);
  }
  close() {
    return this.real.close();
  }
}

/** Down while `down`; killed right after Redis answers the first plain settle (SETTLE_WRITE) it is sent once `killAfterSettle`. */
class DiesAfterPlainSettle implements RedisClient {
  down = false;
  killAfterSettle = false;
  killed = false;
  constructor(private readonly real: RedisClient) {}
  async command(args: Array<string | number>): Promise<unknown> {
    if (this.down || this.killed) throw new RedisUnavailableError('Redis did not answer in time');
    const reply = await this.real.command(args);
    const script = args[0] === 'EVALSHA' || args[0] === 'EVAL' ? args[1] : undefined;
    if (this.killAfterSettle && (script === SETTLE_WRITE.sha || script === SETTLE_WRITE.source)) this.killed = true;
    return reply;
  }
  close() {
    return this.real.close();
  }
}

const pending = (at: number): PendingAudit => ({
  time: new Date(at).toISOString(),
  key: KEY,
  server: 'engage-mcp-http',
  operationId: 'contact.delete',
  paramsDigest: 'digest-settle',
  params: { id: 'c-49' },
  confirmation: 'not needed',
});
const record = async (prefix: string) => ((await redis().command(['LRANGE', auditListKey(KEY, prefix), 0, -1])) as string[]).map((line) => JSON.parse(line));

describe('a settle with its line that Redis did not take, tried again without the line', () => {
  it('leaves the line in Redis before the replica can die', async () => {
    const prefix = `s${++prefixes}:`;
    const flaky = new FailsSettleOnceThenDies(redis());
    const store = new RedisGuardStore(flaky, { stateSecret: STATE_SECRET, callerClock: true, prefix });
    const now = Date.now();
    const audit = pending(now);
    await store.claimWrite('w', 'owner', NO_YES, now, now, audit);
    const line: AuditEntry = { ...audit, outcome: 'done' };
    await expect(store.settleWrite('w', 'owner', 'done', false, line)).rejects.toBeInstanceOf(SettleOwed);
    // settleShared's next try, without the line (the store keeps it), as the call makes it at once.
    await store.settleWrite('w', 'owner', 'done', false);
    flaky.killed = true;
    // The write went out: its line is in Redis (or, its mark still in flight, an orphan's would come).
    const other = new RedisGuardStore(redis(), { stateSecret: STATE_SECRET, callerClock: true, prefix });
    expect(await other.lastSentWrite('w', Date.now())).toMatchObject({ outcome: 'done' });
    expect(await record(prefix)).toEqual([expect.objectContaining({ operationId: 'contact.delete', outcome: 'done', seq: 1 })]);
    store.close();
  });

  it('kept with the line and without it, both: the one with the line is made first', async () => {
    const prefix = `s${++prefixes}:`;
    const flaky = new DiesAfterPlainSettle(redis());
    const store = new RedisGuardStore(flaky, { stateSecret: STATE_SECRET, callerClock: true, prefix });
    const now = Date.now();
    const audit = pending(now);
    await store.claimWrite('w', 'owner', NO_YES, now, now, audit);
    flaky.down = true;
    await expect(store.settleWrite('w', 'owner', 'done', false, { ...audit, outcome: 'done' })).rejects.toBeInstanceOf(SettleOwed);
    await expect(store.settleWrite('w', 'owner', 'done', false)).rejects.toThrow(/did not answer/);
    // Redis answers again; the kept settles are made (here by the write's next read), and the replica dies after the plain one.
    [flaky.down, flaky.killAfterSettle] = [false, true];
    await store.lastSentWrite('w', Date.now()).catch(() => undefined);
    const other = new RedisGuardStore(redis(), { stateSecret: STATE_SECRET, callerClock: true, prefix });
    expect(await other.lastSentWrite('w', Date.now())).toMatchObject({ outcome: 'done' });
    expect(await record(prefix)).toEqual([expect.objectContaining({ operationId: 'contact.delete', outcome: 'done', seq: 1 })]);
    store.close();
  });
});
