// Where OAuth state lives: Redis when ENGAGE_REDIS_URL is set (every replica honours every token),
// else this process (one replica; grants end on restart). Values are JSON records that expire;
// secrets appear only as hashes, the tenant key only sealed (crypto.ts).
import { createHash, randomBytes } from 'node:crypto';
import { Owed, RedisReplyError, type RedisClient } from '../redis.js';

/**
 * How many disposable records (client registrations no sign-in has used yet, which anyone may make)
 * a store holds live at once, and their bytes (as JSON): past either, a new one pushes out the
 * oldest, so registrations from any number of addresses cannot fill the store (Redis's memory,
 * every tenant's), nor keep new ones refused: a person signs in within minutes of registering, and a
 * flood would have to make all of them in those minutes to push that one out.
 */
export interface DisposableLimits {
  count: number;
  bytes: number;
}

export const DISPOSABLE_LIMITS: DisposableLimits = { count: 10_000, bytes: 32 * 1024 * 1024 };

export interface OAuthStore {
  put(key: string, value: unknown, ttlMs: number): Promise<void>;
  /** A record anyone may make, within the store's DisposableLimits (the oldest pushed out past them); a full in-process store drops it before any other live record. Answers how many were pushed out. */
  putDisposable(key: string, value: unknown, ttlMs: number): Promise<number>;
  /** A disposable record kept (replace's rules): no longer disposable nor counted, alive ttlMs from now. */
  keep(key: string, value: unknown, ttlMs: number): Promise<boolean>;
  /** Writes only over a live record (false when it is gone): an update never brings back what was deleted meanwhile. */
  replace(key: string, value: unknown, ttlMs: number): Promise<boolean>;
  get<T>(key: string): Promise<T | undefined>;
  delete(key: string): Promise<void>;
  /** True for the first caller only, across replicas (single use of codes and refresh tokens). */
  claimOnce(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Takes back this store's claim of `key` (claimOnce true here) for a use that failed before it gave
   * anything (the store stopped answering, and the client is told "try again"): the retry is no second
   * use. A store that does not answer takes it back later.
   */
  unclaim(key: string): Promise<void>;
  /** Adds one to a counter that expires ttlMs after it was first set; returns the new count (rate limits). */
  count(key: string, ttlMs: number): Promise<number>;
  addMember(set: string, member: string, ttlMs: number): Promise<void>;
  members(set: string): Promise<string[]>;
  removeMember(set: string, member: string): Promise<void>;
}

/** How many records one process keeps at most: expired ones are dropped first, then the oldest disposable one, then the oldest. */
const MEMORY_LIMIT = 200_000;
/** A full store looks for expired records at most this often (a sweep reads every record). */
const SWEEP_GAP_MS = 1_000;

export class MemoryOAuthStore implements OAuthStore {
  private readonly records = new Map<string, { value: unknown; expiresAt: number }>();
  /** The keys of disposable records and their sizes, oldest first. */
  private readonly disposable = new Map<string, number>();
  private disposableBytes = 0;
  private sweptAt = 0;

  /** `limit`, `disposableLimits`: MEMORY_LIMIT and DISPOSABLE_LIMITS but in tests. */
  constructor(
    private readonly limit = MEMORY_LIMIT,
    private readonly disposableLimits = DISPOSABLE_LIMITS,
  ) {}

  private live(key: string): { value: unknown; expiresAt: number } | undefined {
    const record = this.records.get(key);
    if (record && record.expiresAt <= Date.now()) this.drop(key);
    return record && record.expiresAt > Date.now() ? record : undefined;
  }

  private drop(key: string): void {
    this.records.delete(key);
    this.disposableBytes -= this.disposable.get(key) ?? 0;
    this.disposable.delete(key);
  }

  /** `disposableSize`: the record is disposable, of this many bytes. */
  private set(key: string, value: unknown, ttlMs: number, disposableSize?: number): void {
    this.drop(key);
    if (this.records.size >= this.limit) this.makeRoom();
    this.records.set(key, { value, expiresAt: Date.now() + ttlMs });
    if (disposableSize === undefined) return;
    this.disposable.set(key, disposableSize);
    this.disposableBytes += disposableSize;
  }

  /**
   * Expired records first: most are never looked up again (a spent token's claim, a counter), and
   * dropping only the oldest let one tenant's refreshes in a loop, or a busy service in time, push
   * out every tenant's live grants, tokens and client registrations. Then the oldest disposable one:
   * registrations cost nothing but an address (20 an hour each), and one with many addresses (an
   * IPv6 /48 is 65,536 of them) filled the store with registrations living 30 days, after which
   * every new record pushed out the oldest live one, a tenant's registration, whose refresh then
   * failed (invalid_client) and whose person had to sign in again. The oldest live one only then.
   */
  private makeRoom(): void {
    const now = Date.now();
    if (Math.abs(now - this.sweptAt) >= SWEEP_GAP_MS) {
      this.sweptAt = now;
      for (const [key, record] of this.records) if (record.expiresAt <= now) this.drop(key);
    }
    if (this.records.size < this.limit) return;
    this.drop((this.disposable.values().next().value ?? this.records.keys().next().value) as string);
  }

  async put(key: string, value: unknown, ttlMs: number): Promise<void> {
    this.set(key, structuredClone(value), ttlMs);
  }

  async putDisposable(key: string, value: unknown, ttlMs: number): Promise<number> {
    // Oldest first: the ones ended go (all live as long, so the first live one ends the sweep).
    for (const oldest of this.disposable.keys()) if (this.live(oldest)) break;
    const size = Buffer.byteLength(JSON.stringify(value));
    let pushedOut = 0;
    while (this.disposable.size > 0 && (this.disposable.size >= this.disposableLimits.count || this.disposableBytes + size > this.disposableLimits.bytes)) {
      this.drop(this.disposable.keys().next().value as string);
      pushedOut += 1;
    }
    this.set(key, structuredClone(value), ttlMs, size);
    return pushedOut;
  }

  async keep(key: string, value: unknown, ttlMs: number): Promise<boolean> {
    return this.replace(key, value, ttlMs);
  }

  async replace(key: string, value: unknown, ttlMs: number): Promise<boolean> {
    if (!this.live(key)) return false;
    this.set(key, structuredClone(value), ttlMs);
    return true;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const record = this.live(key);
    return record ? (structuredClone(record.value) as T) : undefined;
  }

  async delete(key: string): Promise<void> {
    this.drop(key);
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.set(key, true, ttlMs);
    return true;
  }

  async unclaim(key: string): Promise<void> {
    this.drop(key);
  }

  async count(key: string, ttlMs: number): Promise<number> {
    const record = this.live(key);
    const next = ((record?.value as number | undefined) ?? 0) + 1;
    if (record) record.value = next;
    else this.set(key, next, ttlMs);
    return next;
  }

  async addMember(set: string, member: string, ttlMs: number): Promise<void> {
    const members = new Set((this.live(set)?.value as string[] | undefined) ?? []);
    members.add(member);
    this.set(set, [...members], ttlMs);
  }

  async members(set: string): Promise<string[]> {
    return [...((this.live(set)?.value as string[] | undefined) ?? [])];
  }

  async removeMember(set: string, member: string): Promise<void> {
    const record = this.live(set);
    if (record) record.value = (record.value as string[]).filter((each) => each !== member);
  }
}

/** Counts, and gives the counter its expiry when it has none (a new one, or one an earlier version left without). */
const COUNT = `local count = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

/** A Lua script and its SHA1 (EVALSHA, then EVAL when Redis does not know it yet). */
interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });

const COUNT_SCRIPT = script(COUNT);

/**
 * KEYS: the record, the sorted set of disposable records (by end, ms), their sizes (a hash), their
 * bytes in all. ARGV: the value, its ttl, the most records and bytes. Ended ones leave the count
 * first (at most 100 a call); past a limit the oldest live ones are deleted (their keys are the set's
 * members: one Redis, not a cluster); the reply is how many. Redis's clock, so replicas' clocks do
 * not matter. The three keys live as long as the newest record: what eviction or a lost reply
 * leaves wrong is gone with it.
 */
const PUT_DISPOSABLE = script(`local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for _, ended in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)) do
  redis.call('DECRBY', KEYS[4], tonumber(redis.call('HGET', KEYS[3], ended) or '0'))
  redis.call('HDEL', KEYS[3], ended)
  redis.call('ZREM', KEYS[2], ended)
end
local size = string.len(ARGV[1])
local pushed = 0
while redis.call('ZCARD', KEYS[2]) > 0 and (redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) or tonumber(redis.call('GET', KEYS[4]) or '0') + size > tonumber(ARGV[4])) do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  redis.call('DEL', oldest)
  redis.call('DECRBY', KEYS[4], tonumber(redis.call('HGET', KEYS[3], oldest) or '0'))
  redis.call('HDEL', KEYS[3], oldest)
  redis.call('ZREM', KEYS[2], oldest)
  pushed = pushed + 1
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
redis.call('INCRBY', KEYS[4], size)
for index = 2, 4 do redis.call('PEXPIRE', KEYS[index], ARGV[2]) end
return pushed`);

/** The same KEYS; ARGV: the value, its ttl. The record leaves the disposable ones and is written over if still there. */
const KEEP = script(`local size = redis.call('HGET', KEYS[3], KEYS[1])
if size then
  redis.call('DECRBY', KEYS[4], tonumber(size))
  redis.call('HDEL', KEYS[3], KEYS[1])
  redis.call('ZREM', KEYS[2], KEYS[1])
end
return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'XX')`);

/** KEYS[1] a claim. ARGV: the ids of attempts that made it without hearing back. Deletes it if one of them holds it. */
const UNCLAIM = `local holder = redis.call('GET', KEYS[1])
for index = 1, #ARGV do
  if holder == ARGV[index] then return redis.call('DEL', KEYS[1]) end
end
return 0`;

/** Claims a Redis store keeps for unclaim at most. */
const CLAIMS_KEPT = 10_000;

/** The same over Redis (redis.ts's client): JSON strings with PX expiries, SET NX for single use, sets for the connections page. */
export class RedisOAuthStore implements OAuthStore {
  /**
   * Claims this store may have made without hearing back (a SET NX whose reply a stall lost; Redis
   * applies it when it resumes): taken back, by the attempt's id, before this key's next claim here
   * and in the background, so the client's retry of a refresh or code exchange answered 503 is not
   * taken for a second use (which revokes the grant).
   */
  private readonly unanswered = new Owed((key, attempts) => this.redis.command(['EVAL', UNCLAIM, 1, this.key(key), ...attempts]));
  /** Claims made here and heard back, by key, for unclaim: the newest CLAIMS_KEPT (a use ends within its request). */
  private readonly claimed = new Map<string, { attempt: string; expiresAt: number }>();

  /** `disposableLimits`: DISPOSABLE_LIMITS but in tests. */
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'engage:oauth:',
    private readonly disposableLimits = DISPOSABLE_LIMITS,
  ) {}

  private key(key: string): string {
    return `${this.prefix}${key}`;
  }

  private async run(script: Script, keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await this.redis.command(['EVALSHA', script.sha, keys.length, ...keys, ...args]);
    } catch (error) {
      // NOSCRIPT: Redis does not know the script yet (or restarted); EVAL loads and runs it.
      if (!(error instanceof RedisReplyError && error.message.startsWith('NOSCRIPT'))) throw error;
    }
    return this.redis.command(['EVAL', script.source, keys.length, ...keys, ...args]);
  }

  /** The record's key, then the keys that count the disposable ones. */
  private disposableKeys(key: string): string[] {
    return [this.key(key), this.key('unused'), this.key('unused:sizes'), this.key('unused:bytes')];
  }

  async put(key: string, value: unknown, ttlMs: number): Promise<void> {
    await this.redis.command(['SET', this.key(key), JSON.stringify(value), 'PX', Math.max(1, Math.ceil(ttlMs))]);
  }

  async putDisposable(key: string, value: unknown, ttlMs: number): Promise<number> {
    const limits = [this.disposableLimits.count, this.disposableLimits.bytes];
    return Number(await this.run(PUT_DISPOSABLE, this.disposableKeys(key), [JSON.stringify(value), Math.max(1, Math.ceil(ttlMs)), ...limits]));
  }

  async replace(key: string, value: unknown, ttlMs: number): Promise<boolean> {
    return (await this.redis.command(['SET', this.key(key), JSON.stringify(value), 'PX', Math.max(1, Math.ceil(ttlMs)), 'XX'])) === 'OK';
  }

  async keep(key: string, value: unknown, ttlMs: number): Promise<boolean> {
    return (await this.run(KEEP, this.disposableKeys(key), [JSON.stringify(value), Math.max(1, Math.ceil(ttlMs))])) === 'OK';
  }

  async get<T>(key: string): Promise<T | undefined> {
    const reply = await this.redis.command(['GET', this.key(key)]);
    return typeof reply === 'string' ? (JSON.parse(reply) as T) : undefined;
  }

  async delete(key: string): Promise<void> {
    await this.redis.command(['DEL', this.key(key)]);
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    await this.unanswered.now(key);
    // A JSON string, as every value here (a get of the claim reads it as a record).
    const attempt = JSON.stringify(randomBytes(12).toString('base64url'));
    let claimed: boolean;
    try {
      claimed = (await this.redis.command(['SET', this.key(key), attempt, 'NX', 'PX', Math.max(1, Math.ceil(ttlMs))])) === 'OK';
    } catch (error) {
      this.unanswered.remember(key, attempt, Date.now() + ttlMs);
      throw error;
    }
    if (claimed) {
      this.claimed.delete(key);
      this.claimed.set(key, { attempt, expiresAt: Date.now() + ttlMs });
      if (this.claimed.size > CLAIMS_KEPT) this.claimed.delete(this.claimed.keys().next().value as string);
    }
    return claimed;
  }

  async unclaim(key: string): Promise<void> {
    const mine = this.claimed.get(key);
    this.claimed.delete(key);
    if (!mine) return;
    this.unanswered.remember(key, mine.attempt, mine.expiresAt);
    await this.unanswered.now(key);
  }

  /** One script, so a counter never lives without its expiry (a reply lost between an INCR and its PEXPIRE made a limit last for ever). */
  async count(key: string, ttlMs: number): Promise<number> {
    return Number(await this.run(COUNT_SCRIPT, [this.key(key)], [Math.max(1, Math.ceil(ttlMs))]));
  }

  async addMember(set: string, member: string, ttlMs: number): Promise<void> {
    await this.redis.command(['SADD', this.key(set), member]);
    await this.redis.command(['PEXPIRE', this.key(set), Math.max(1, Math.ceil(ttlMs))]);
  }

  async members(set: string): Promise<string[]> {
    const reply = await this.redis.command(['SMEMBERS', this.key(set)]);
    return Array.isArray(reply) ? reply.filter((each): each is string => typeof each === 'string') : [];
  }

  async removeMember(set: string, member: string): Promise<void> {
    await this.redis.command(['SREM', this.key(set), member]);
  }
}
