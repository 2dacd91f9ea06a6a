// Redis for the remote service, against a real redis-server: single use of confirmations across
// replicas (failing closed), the shared pace (failing open), and the RESP client itself.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Confirmations, type SpentStore } from '../shared/src/call/confirmations.js';
import { InputError } from '../shared/src/model/errors.js';
import { Pacer } from '../shared/src/upstream/pacing.js';
import {
  connectRedis,
  encodeCommand,
  RedisPaceKeeper,
  RedisReplyError,
  RedisSpentStore,
  SPENT_KEPT_PAST_EXPIRY_MS,
  RedisUnavailableError,
  RespParser,
  SPENT_STORE_UNAVAILABLE,
  type RedisClient,
} from '../packages/http/src/redis.js';
import { createJsonLog } from '../packages/http/src/log.js';
import { makeCertificates, startRedis, type RedisServer, type TlsFiles } from './redis-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Retries `attempt` until it resolves (at most `tries` times, `gapMs` apart); counts, never times. */
async function eventually<T>(attempt: () => Promise<T>, tries = 200, gapMs = 50): Promise<T> {
  let last: unknown;
  for (let index = 0; index < tries; index++) {
    try {
      return await attempt();
    } catch (error) {
      last = error;
      await sleep(gapMs);
    }
  }
  throw last;
}

describe('RESP2 parser', () => {
  const stream = Buffer.concat([
    Buffer.from('+OK\r\n'),
    Buffer.from('-ERR wrong number of arguments\r\n'),
    Buffer.from(':-42\r\n'),
    Buffer.from(':1732392104123\r\n'),
    Buffer.from('$12\r\nhéllo\r\nwörld\r\n'.replace('$12', `$${Buffer.byteLength('héllo\r\nwörld')}`)),
    Buffer.from('$0\r\n\r\n'),
    Buffer.from('$-1\r\n'),
    Buffer.from('*-1\r\n'),
    Buffer.from('*0\r\n'),
    Buffer.from('*3\r\n$3\r\nfoo\r\n*2\r\n:1\r\n$-1\r\n-NOSCRIPT No matching script\r\n'),
  ]);
  const expected = [
    'OK',
    new RedisReplyError('ERR wrong number of arguments'),
    -42,
    1732392104123,
    'héllo\r\nwörld',
    '',
    null,
    null,
    [],
    ['foo', [1, null], new RedisReplyError('NOSCRIPT No matching script')],
  ];

  it('parses every reply type, fed one byte at a time (multi-byte characters split too)', () => {
    const replies: unknown[] = [];
    const parser = new RespParser((reply) => replies.push(reply));
    for (let index = 0; index < stream.length; index++) {
      parser.feed(stream.subarray(index, index + 1));
      // Nothing is delivered before its last byte: the count only grows at reply ends.
    }
    expect(replies).toEqual(expected);
    expect(replies[1]).toBeInstanceOf(RedisReplyError);
    expect(parser.pendingBytes).toBe(0);
  });

  it('parses the same stream whole, and at every split point into two chunks', () => {
    for (let split = 0; split <= stream.length; split++) {
      const replies: unknown[] = [];
      const parser = new RespParser((reply) => replies.push(reply));
      parser.feed(stream.subarray(0, split));
      parser.feed(stream.subarray(split));
      expect(replies).toEqual(expected);
    }
  });

  it('holds an incomplete reply until its end arrives', () => {
    const replies: unknown[] = [];
    const parser = new RespParser((reply) => replies.push(reply));
    parser.feed(Buffer.from('*2\r\n$3\r\nab'));
    expect(replies).toEqual([]);
    parser.feed(Buffer.from('c\r\n:7'));
    expect(replies).toEqual([]);
    parser.feed(Buffer.from('\r\n+PONG\r\n'));
    expect(replies).toEqual([['abc', 7], 'PONG']);
  });

  it('throws on a malformed stream instead of guessing', () => {
    expect(() => new RespParser(() => {}).feed(Buffer.from('?what\r\n'))).toThrow(/protocol error/);
    expect(() => new RespParser(() => {}).feed(Buffer.from('$3\r\nabcd\r\n'))).toThrow(/not terminated/);
    expect(() => new RespParser(() => {}).feed(Buffer.from(':12x\r\n'))).toThrow(/not an integer/);
  });

  it('encodes commands as arrays of bulk strings, by byte length', () => {
    expect(encodeCommand(['SET', 'clé', 1]).toString('utf8')).toBe('*3\r\n$3\r\nSET\r\n$4\r\nclé\r\n$1\r\n1\r\n');
  });
});

describe('with a real redis-server', () => {
  let server: RedisServer;
  const clients: RedisClient[] = [];
  const client = async (log?: (line: string) => void) => {
    const made = await connectRedis(server.url, log);
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((made) => made.close()));
    await server?.stop();
  });

  it('is Redis 6.2 or later (SET ... PXAT)', async () => {
    const redis = await client();
    const info = (await redis.command(['INFO', 'server'])) as string;
    const [major, minor] = (/redis_version:(\d+)\.(\d+)/.exec(info) ?? []).slice(1).map(Number) as [number, number];
    expect(major * 100 + minor).toBeGreaterThanOrEqual(602);
  });

  it('pipelines: many commands at once on one connection, each answered with its own reply', async () => {
    const redis = await client();
    const keys = Array.from({ length: 500 }, (_, index) => `pipe:${index}`);
    const sets = await Promise.all(keys.map((key, index) => redis.command(['SET', key, `v${index}`])));
    expect(sets.every((reply) => reply === 'OK')).toBe(true);
    const gets = await Promise.all(keys.map((key) => redis.command(['GET', key])));
    expect(gets).toEqual(keys.map((_, index) => `v${index}`));
    await expect(redis.command(['NOSUCHCOMMAND'])).rejects.toBeInstanceOf(RedisReplyError);
    // The connection is still in step after an error reply.
    expect(await redis.command(['ECHO', 'after'])).toBe('after');
  });

  it('rejects at start when Redis is unreachable, or refuses AUTH, without showing the password', async () => {
    const spare = await startRedis();
    const port = spare.port;
    await spare.stop();
    await expect(connectRedis(`redis://127.0.0.1:${port}`)).rejects.toThrow(/unreachable|closed/);
    const secret = 'hunter2-very-secret';
    const refused = await connectRedis(`redis://:${secret}@127.0.0.1:${server.port}`).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(refused?.message).toMatch(/refused the connection/);
    expect(refused?.message).not.toContain(secret);
    await expect(connectRedis('http://127.0.0.1:1')).rejects.toThrow(/redis:\/\//);
  });

  it('AUTH with the password and SELECT the db of the URL; a wrong password is refused without being shown', async () => {
    const guarded = await startRedis();
    try {
      const admin = await connectRedis(guarded.url);
      const password = `pw-${randomBytes(6).toString('hex')}`;
      await admin.command(['CONFIG', 'SET', 'requirepass', password]);
      await admin.close();
      const inDb3 = await connectRedis(`redis://:${encodeURIComponent(password)}@127.0.0.1:${guarded.port}/3`);
      expect(await inDb3.command(['CLIENT', 'INFO'])).toMatch(/ db=3 /);
      await inDb3.close();
      const wrong = await connectRedis(`redis://:not-${password}@127.0.0.1:${guarded.port}`).then(
        () => undefined,
        (error: Error) => error,
      );
      expect(wrong?.message).toMatch(/refused the connection \(WRONGPASS\)/);
      expect(wrong?.message).not.toContain(password);
      await expect(connectRedis(guarded.url).then((made) => made.command(['GET', 'x']))).rejects.toThrow(/NOAUTH/);
    } finally {
      await guarded.stop();
    }
  });

  it('bounds the commands waiting for a reply: beyond, a command is refused at once, not queued', async () => {
    const bounded = await connectRedis(server.url, () => {}, { maxPending: 2 });
    const blocked = bounded.command(['BLPOP', `bounded:${randomBytes(4).toString('hex')}`, 0]).then(
      () => undefined,
      (error: Error) => error,
    );
    const queued = bounded.command(['PING']).then(
      () => undefined,
      (error: Error) => error,
    );
    await expect(bounded.command(['PING'])).rejects.toThrow(/too many Redis commands waiting \(2\); PING was not sent/);
    await bounded.close();
    expect(await blocked).toBeInstanceOf(RedisUnavailableError);
    expect(await queued).toBeInstanceOf(RedisUnavailableError);
  });

  it('consume is true only the first time, across two separate connections', async () => {
    const one = new RedisSpentStore(await client());
    const two = new RedisSpentStore(await client());
    const nonce = randomBytes(8).toString('hex');
    const expiresAt = Date.now() + 60_000;
    expect(await one.consume(nonce, expiresAt)).toBe(true);
    expect(await two.consume(nonce, expiresAt)).toBe(false);
    expect(await one.consume(nonce, expiresAt)).toBe(false);
    expect(await two.consume(`${nonce}-other`, expiresAt)).toBe(true);
  });

  it('50 concurrent redemptions of one token on two replicas: exactly one ok, 49 spent', async () => {
    const secret = randomBytes(32);
    const replicas = [
      new Confirmations({ secret, store: new RedisSpentStore(await client()) }),
      new Confirmations({ secret, store: new RedisSpentStore(await client()) }),
    ];
    const params = { id: 'c-1', name: 'Ada' };
    const { value } = replicas[0]!.issue('token', 'key-fp', 'contact.update', params);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, index) => replicas[index % 2]!.redeem('token', value, 'key-fp', 'contact.update', { name: 'Ada', id: 'c-1' })),
    );
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'spent')).toHaveLength(49);
  });

  it('a spent nonce expires a day after its value (SPENT_KEPT_PAST_EXPIRY_MS), and may then be stored again', async () => {
    const redis = await client();
    const store = new RedisSpentStore(redis, 'test:spent:');
    const expiresAt = Date.now() + 60_000;
    expect(await store.consume('exact', expiresAt)).toBe(true);
    // Given as a lifetime (PEXPIRE, c3909e0), measured by Redis from when it is written: a few ms
    // after this process read its clock on a loaded machine, never before.
    const expiresAtInRedis = Number(await redis.command(['PEXPIRETIME', 'test:spent:exact']));
    expect(expiresAtInRedis).toBeGreaterThanOrEqual(expiresAt + SPENT_KEPT_PAST_EXPIRY_MS - 1);
    expect(expiresAtInRedis).toBeLessThan(expiresAt + SPENT_KEPT_PAST_EXPIRY_MS + 2_000);

    // Kept no longer than its value here, so its removal can be watched.
    const brief = new RedisSpentStore(redis, 'test:spent:', { keptPastExpiryMs: 0 });
    const soon = Date.now() + 100;
    expect(await brief.consume('soon', soon)).toBe(true);
    expect(await brief.consume('soon', soon)).toBe(false);
    // Redis removes it once its time has come (polled by count, not timed).
    await eventually(async () => {
      if ((await redis.command(['EXISTS', 'test:spent:soon'])) !== 0) throw new Error('still there');
    });
    expect(await brief.consume('soon', Date.now() + 60_000)).toBe(true);
  });

  it('an error reply is never read as a first use', async () => {
    const liar: SpentStore = new RedisSpentStore({ command: async () => 'QUEUED', close: async () => {} });
    await expect(liar.consume('n', Date.now() + 1000)).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    const broken: SpentStore = new RedisSpentStore({
      command: async () => Promise.reject(new RedisReplyError("READONLY You can't write against a read only replica.")),
      close: async () => {},
    });
    await expect(broken.consume('n', Date.now() + 1000)).rejects.toBeInstanceOf(InputError);
  });

  describe('the shared pace', () => {
    it('behaves exactly like Pacer for the same sequence of calls and the same clock', async () => {
      let now = 1_700_000_000_000;
      const clock = () => now;
      const local = new Pacer(clock);
      const shared = new RedisPaceKeeper(await client(), `equiv-${randomBytes(4).toString('hex')}`, 'test:pace:', { now: clock });
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (let step = 0; step < 400; step++) {
        const pick = random();
        now += Math.floor(random() * 700);
        if (pick < 0.45) {
          const maxWait = Math.floor(random() * 5000);
          expect(await shared.reserve(maxWait)).toBe(local.reserve(maxWait));
        } else if (pick < 0.8) {
          const limit = random() < 0.2 ? undefined : [30, 60, 120, 600][Math.floor(random() * 4)];
          const remaining = random() < 0.2 ? undefined : Math.floor(random() * 3);
          const reset = random() < 0.3 ? undefined : Math.floor(random() * 4);
          await shared.observe(limit, remaining, reset);
          local.observe(limit, remaining, reset);
        } else if (pick < 0.9) {
          const wait = Math.floor(random() * 4000) - 500;
          await shared.hold(wait, 2500);
          local.hold(wait, 2500);
        } else {
          expect(await shared.waitEstimateMs()).toBe(local.waitEstimateMs());
        }
      }
      expect(shared.usingFallback).toBe(false);
    });

    it('two replicas with the same key share it; another key is not affected', async () => {
      let now = 1_700_000_000_000;
      const clock = () => now;
      const fingerprint = `shared-${randomBytes(4).toString('hex')}`;
      const one = new RedisPaceKeeper(await client(), fingerprint, 'test:pace:', { now: clock });
      const two = new RedisPaceKeeper(await client(), fingerprint, 'test:pace:', { now: clock });
      const other = new RedisPaceKeeper(await client(), `other-${fingerprint}`, 'test:pace:', { now: clock });
      expect(await two.reserve(10_000)).toBe(0);
      // One replica learns the bucket is empty (60 a minute: a slot per second)...
      await one.observe(60, 0, undefined);
      // ...and the other must wait for the slots, one after another.
      expect(await two.reserve(10_000)).toBe(1000);
      expect(await one.reserve(10_000)).toBe(2000);
      expect(await two.waitEstimateMs()).toBe(3000);
      expect(await two.reserve(2500)).toBeUndefined();
      // A 429 seen by one holds both.
      now += 3000;
      await two.hold(5000, 4000);
      expect(await one.waitEstimateMs()).toBe(4000);
      expect(await other.reserve(0)).toBe(0);
      expect(await other.waitEstimateMs()).toBe(0);
    });

    it('with Redis TIME as the one clock (no clock given), a replica still waits for the other', async () => {
      const fingerprint = `time-${randomBytes(4).toString('hex')}`;
      const one = new RedisPaceKeeper(await client(), fingerprint);
      const two = new RedisPaceKeeper(await client(), fingerprint);
      await one.observe(1, 0, undefined); // one a minute
      const wait = await two.reserve(120_000);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60_000);
    });

    it('expires: idle keys leave nothing behind, and an unlimited key writes nothing', async () => {
      const redis = await client();
      const fingerprint = `ttl-${randomBytes(4).toString('hex')}`;
      const keeper = new RedisPaceKeeper(redis, fingerprint, 'test:pace:', { ttlMs: 60_000 });
      expect(await keeper.reserve(1000)).toBe(0);
      expect(await redis.command(['EXISTS', `test:pace:${fingerprint}`])).toBe(0);
      await keeper.observe(600, 5, 1);
      const ttl = (await redis.command(['PTTL', `test:pace:${fingerprint}`])) as number;
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
      const short = new RedisPaceKeeper(redis, `${fingerprint}-short`, 'test:pace:', { ttlMs: 50 });
      await short.observe(600, 5, 1);
      await eventually(async () => {
        if ((await redis.command(['EXISTS', `test:pace:${fingerprint}-short`])) !== 0) throw new Error('still there');
      });
    });

    it('loads its scripts again after SCRIPT FLUSH (EVALSHA, then EVAL on NOSCRIPT)', async () => {
      const redis = await client();
      const logs: string[] = [];
      const keeper = new RedisPaceKeeper(redis, `flush-${randomBytes(4).toString('hex')}`, 'test:pace:', { log: (line) => logs.push(line) });
      await keeper.observe(60, 0, undefined);
      await redis.command(['SCRIPT', 'FLUSH']);
      expect(await keeper.reserve(10_000)).toBeGreaterThan(0);
      expect(keeper.usingFallback).toBe(false);
      expect(logs).toEqual([]);
    });
  });
});

describe('rediss:// (TLS) and ACL users, as managed Redis services require', () => {
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const users = [`engage on >${password} ~engage:* &* +@all`];
  let dir: string;
  let tls: TlsFiles;
  let server: RedisServer;
  let plain: RedisServer;
  const failure = (url: string, options = {}) =>
    connectRedis(url, () => {}, options).then(
      () => undefined,
      (error: Error) => error,
    );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engage-redis-tls-'));
    tls = makeCertificates(dir);
    [server, plain] = await Promise.all([startRedis({ tls, users }), startRedis({ users })]);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), plain?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects over TLS as an ACL user, trusting a private CA given as ca', async () => {
    const redis = await connectRedis(`rediss://engage:${password}@127.0.0.1:${server.port}`, () => {}, { ca: readFileSync(tls.caFile) });
    try {
      expect(await redis.command(['ACL', 'WHOAMI'])).toBe('engage');
      expect(await redis.command(['CLIENT', 'INFO'])).toMatch(/ user=engage /);
      const store = new RedisSpentStore(redis);
      expect(await store.consume('tls-nonce', Date.now() + 60_000)).toBe(true);
      expect(await store.consume('tls-nonce', Date.now() + 60_000)).toBe(false);
      // The user's rules hold: keys outside engage:* are not its own.
      await expect(redis.command(['SET', 'other:key', '1'])).rejects.toThrow(/NOPERM/);
    } finally {
      await redis.close();
    }
  });

  it('redis:// (no TLS) with an ACL user works too', async () => {
    const redis = await connectRedis(`redis://engage:${encodeURIComponent(password)}@127.0.0.1:${plain.port}`);
    expect(await redis.command(['ACL', 'WHOAMI'])).toBe('engage');
    await redis.close();
  });

  it('a wrong password is refused at start with a clear error that never shows it', async () => {
    for (const [url, options] of [
      [`rediss://engage:not-${password}@127.0.0.1:${server.port}`, { ca: readFileSync(tls.caFile) }],
      [`redis://engage:not-${password}@127.0.0.1:${plain.port}`, {}],
    ] as const) {
      const error = await failure(url, options);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(error?.message).toMatch(/refused the connection \(WRONGPASS\): check the user and password in ENGAGE_REDIS_URL/);
      expect(error?.message).not.toContain(password);
    }
  });

  it('a Redis address in a log line has its password cut out', () => {
    const lines: string[] = [];
    const log = createJsonLog({ writeLine: (line) => lines.push(line) });
    log.warn(`redis: could not reach rediss://engage:${password}@10.0.0.7:6380/0 nor redis://:${password}@cache:6379`);
    expect(lines.join('\n')).not.toContain(password);
    expect(JSON.parse(lines[0]!).msg).toBe('redis: could not reach rediss://engage:[redacted]@10.0.0.7:6380/0 nor redis://:[redacted]@cache:6379');
  });

  it('a certificate from a CA not trusted is refused, saying how to trust it', async () => {
    const error = await failure(`rediss://engage:${password}@127.0.0.1:${server.port}`);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error?.message).toMatch(/presented a TLS certificate that is not trusted \(\w+\): set ENGAGE_REDIS_CA_FILE/);
    expect(error?.message).not.toContain(password);
    // Another CA's certificate is no better than none.
    const stranger = makeCertificates(dir, 'stranger');
    const other = await failure(`rediss://engage:${password}@127.0.0.1:${server.port}`, { ca: readFileSync(stranger.caFile) });
    expect(other?.message).toMatch(/not trusted/);
  });
});

describe('when Redis goes away', () => {
  let server: RedisServer;
  let redis: RedisClient;
  const logs: string[] = [];

  beforeAll(async () => {
    server = await startRedis();
    redis = await connectRedis(server.url, (line) => logs.push(line), {});
  });
  afterAll(async () => {
    await redis?.close();
    await server?.stop();
  });

  it('a command in flight when the connection drops rejects, and is not sent again', async () => {
    const other = await connectRedis(server.url);
    // BLPOP on an empty list waits: a command still in flight when Redis stops.
    const blocked = redis.command(['BLPOP', 'inflight:list', 0]).then(
      () => undefined,
      (error: Error) => error,
    );
    await server.stop();
    const lost = await blocked;
    expect(lost).toBeInstanceOf(RedisUnavailableError);
    expect(lost?.message).toMatch(/lost before BLPOP was answered/);
    await server.restart();
    await eventually(() => redis.command(['PING']));
    // Had it been re-sent, it would be waiting on the list now and take this element.
    await eventually(() => other.command(['PING']));
    await other.command(['RPUSH', 'inflight:list', 'x']);
    expect(await redis.command(['LLEN', 'inflight:list'])).toBe(1);
    await other.close();
  });

  it('consume fails closed while Redis is down, and works again after a restart', async () => {
    const store = new RedisSpentStore(redis);
    const secret = randomBytes(32);
    const confirmations = new Confirmations({ secret, store });
    const { value } = confirmations.issue('token', 'fp', 'contact.delete', { id: 'x' });
    await server.stop();
    // Down: never "first use"; the message says nothing was run and to try again.
    await expect(store.consume('down', Date.now() + 60_000)).rejects.toThrow(SPENT_STORE_UNAVAILABLE);
    await expect(confirmations.redeem('token', value, 'fp', 'contact.delete', { id: 'x' })).rejects.toBeInstanceOf(InputError);
    await server.restart();
    // The client reconnects on its own (backoff); the same token is then honoured once.
    expect(await eventually(() => confirmations.redeem('token', value, 'fp', 'contact.delete', { id: 'x' }))).toBe('ok');
    expect(await confirmations.redeem('token', value, 'fp', 'contact.delete', { id: 'x' })).toBe('spent');
    expect(logs.some((line) => /lost/.test(line))).toBe(true);
    expect(logs.some((line) => /reconnected/.test(line))).toBe(true);
  });

  it('the pace falls back to a local Pacer while Redis is down (logged once per outage, not per key), and uses Redis again after', async () => {
    const paceLogs: string[] = [];
    const fingerprint = `down-${randomBytes(4).toString('hex')}`;
    let now = 1_700_000_000_000;
    // No log of its own: it logs where the client does.
    const keeper = new RedisPaceKeeper(redis, fingerprint, 'test:pace:', { now: () => now });
    await keeper.observe(60, 0, undefined);
    expect(keeper.usingFallback).toBe(false);
    await server.stop();
    // The local pace learned the same headers: it makes the caller wait too.
    expect(await keeper.reserve(10_000)).toBe(1000);
    expect(keeper.usingFallback).toBe(true);
    await keeper.observe(60, 5, undefined);
    now += 5000;
    expect(await keeper.reserve(10_000)).toBe(0);
    await keeper.hold(1000, 2000);
    expect(await keeper.waitEstimateMs()).toBe(1000);
    // Another key on the same client: its own local pace, and no second line for the same outage.
    const another = new RedisPaceKeeper(redis, `${fingerprint}-2`, 'test:pace:', { now: () => now, log: (line) => paceLogs.push(line) });
    expect(await another.reserve(10_000)).toBe(0);
    expect(another.usingFallback).toBe(true);
    expect(logs.filter((line) => /shared pace is unavailable/.test(line))).toHaveLength(1);
    expect(paceLogs).toEqual([]);
    await server.restart();
    await eventually(() => redis.command(['PING']));
    // Redis lost its data with the restart: an unknown pace lets the call go.
    expect(await keeper.reserve(10_000)).toBe(0);
    expect(keeper.usingFallback).toBe(false);
    expect(logs.filter((line) => /shared pace is back/.test(line))).toHaveLength(1);
  });

  it('a command Redis does not answer in time rejects, and the connection is replaced', async () => {
    const slowLogs: string[] = [];
    const impatient = await connectRedis(server.url, (line) => slowLogs.push(line), { commandTimeoutMs: 200 });
    await expect(impatient.command(['BLPOP', 'never:list', 0])).rejects.toThrow(/did not answer BLPOP within 200 ms/);
    expect(await eventually(() => impatient.command(['PING']))).toBe('PONG');
    expect(slowLogs.some((line) => /dropping the connection/.test(line))).toBe(true);
    await impatient.close();
    await expect(impatient.command(['PING'])).rejects.toThrow(/closed/);
  });
});
