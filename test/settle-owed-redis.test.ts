// Remote mode: a write carried out while Redis did not answer (restarting, a network blip) could
// neither be settled nor get its audit line, and when Redis answered again the settle made later
// dropped the line the claim had kept with the mark: the write had no line at all (chaos seed 15
// showed one sent during a Redis restart). Now the store keeps the settle with its line and makes
// both once Redis answers, and the call appends no line of its own (there would be two).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, RedisUnavailableError, type RedisClient } from '../packages/http/src/redis.js';
import { auditListKey, RedisGuardStore, SETTLE_AND_APPEND } from '../packages/http/src/redis-guard-store.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { keyFingerprint } from '../shared/src/index.js';
import { writeDigest } from '../shared/src/call/journal.js';
import { remoteAuditSecret, verifyAuditLines } from '../shared/src/call/audit.js';
import { DOMAINS, inProcess, textOf, until, type InProcess } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');

/** Redis stops answering at the first settle that would append a line, until the test brings it back (or, `once`, for that command alone). */
class GoesDownAtSettle implements RedisClient {
  down = false;
  constructor(
    private readonly real: RedisClient,
    private readonly once = false,
  ) {}
  async command(args: Array<string | number>): Promise<unknown> {
    const script = args[0] === 'EVALSHA' || args[0] === 'EVAL' ? args[1] : undefined;
    if (script === SETTLE_AND_APPEND.sha || script === SETTLE_AND_APPEND.source) this.down ||= !this.cameBack;
    if (this.down) {
      if (this.once) this.up();
      throw new RedisUnavailableError('Redis is not connected (reconnecting)');
    }
    return this.real.command(args);
  }
  cameBack = false;
  up(): void {
    this.down = false;
    this.cameBack = true;
  }
  close() {
    return this.real.close();
  }
}

let sandbox: Sandbox;
let redis: RedisServer;
let real: RedisClient;
const servers: InProcess[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  real = await connectRedis(redis.url);
});
afterEach(async () => {
  await Promise.allSettled(servers.splice(0).map((each) => each.close()));
});
afterAll(async () => {
  await real?.close();
  await redis?.stop();
  await sandbox?.close();
});

const writeOf = (params: Record<string, unknown>) => writeDigest(keyFingerprint(sandbox.keys.full), 'channel.whatsapp.send', params);
const recordOf = async () => (await real.command(['LRANGE', auditListKey(keyFingerprint(sandbox.keys.full).slice(0, 16)), 0, -1])) as string[];

describe('a remote write settled while Redis did not answer', () => {
  it('gets its one audit line once Redis answers again', async () => {
    const flaky = new GoesDownAtSettle(real);
    const store = new RedisGuardStore(flaky, { stateSecret: STATE_SECRET });
    const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => store } });
    servers.push(server);
    const params = { msisdn: '081234567890', message: 'settled while Redis was down' };
    const sent = await server.call('channel.whatsapp.send', params);
    expect(sent.isError, textOf(sent)).toBeFalsy();
    expect(flaky.down).toBe(true);
    expect(await recordOf()).toEqual([]);
    flaky.up();
    await until('the line written once Redis answers', async () => (await recordOf()).length > 0);
    // Given time for a second line, should anything write one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lines = await recordOf();
    expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ operationId: 'channel.whatsapp.send', outcome: 'done' })]);
    expect(verifyAuditLines(remoteAuditSecret(STATE_SECRET), lines)).toEqual({ ok: true, lines: 1 });
  });

  it('failed once: settled at once by the call’s next try, its line appended once by the store', async () => {
    const before = (await recordOf()).length;
    const flaky = new GoesDownAtSettle(real, true);
    const store = new RedisGuardStore(flaky, { stateSecret: STATE_SECRET });
    const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => store } });
    servers.push(server);
    const params = { msisdn: '081234567890', message: 'settle failed once' };
    const sent = await server.call('channel.whatsapp.send', params);
    expect(sent.isError, textOf(sent)).toBeFalsy();
    expect(flaky.cameBack).toBe(true);
    // Settled by the call's next try: another server sees it done, not still being sent.
    expect(await store.lastSentWrite(writeOf({ ...params, msisdn: '6281234567890' }), Date.now())).toMatchObject({ outcome: 'done' });
    await until('the line written', async () => (await recordOf()).length > before);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lines = (await recordOf()).slice(before).map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ operationId: 'channel.whatsapp.send', outcome: 'done' })]);
  });
});
