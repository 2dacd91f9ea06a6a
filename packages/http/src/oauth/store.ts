// Where OAuth state lives: Redis when ENGAGE_REDIS_URL is set (every replica honours every token),
// else this process (one replica; grants end on restart). Values are JSON records that expire;
// secrets appear only as hashes, the tenant key only sealed (crypto.ts).
import { createHash, randomBytes } from 'node:crypto';
import { Owed, RedisReplyError, type RedisClient } from '../redis.js';

/** `disposable`: a record anyone may make (a client registration no sign-in has used yet): a full in-process store drops it before any other live record. */
export interface PutOptions {
  disposable?: boolean;
}

export interface OAuthStore {
  put(key: string, value: unknown, ttlMs: number, options?: PutOptions): Promise<void>;
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
  /** The keys of disposable records, oldest first. */
  private readonly disposable = new Set<string>();
  private sweptAt = 0;

  /** `limit`: MEMORY_LIMIT but in tests. */
  constructor(private readonly limit = MEMORY_LIMIT) {}

  private live(key: string): { value: unknown; expiresAt: number } | undefined {
    const record = this.records.get(key);
    if (record && record.expiresAt <= Date.now()) this.drop(key);
    return record && record.expiresAt > Date.now() ? record : undefined;
  }

  private drop(key: string): void {
    this.records.delete(key);
    this.disposable.delete(key);
  }

  private set(key: string, value: unknown, ttlMs: number, disposable = false): void {
    this.drop(key);
    if (this.records.size >= this.limit) this.makeRoom();
    this.records.set(key, { value, expiresAt: Date.now() + ttlMs });
    if (disposable) this.disposable.add(key);
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

  async put(key: string, value: unknown, ttlMs: number, options?: PutOptions): Promise<void> {
    this.set(key, structuredClone(value), ttlMs, options?.disposable === true);
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
const COUNT_SCRIPT = { source: COUNT, sha: createHash('sha1').update(COUNT).digest('hex') };

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

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'engage:oauth:',
  ) {}

  private key(key: string): string {
    return `${this.prefix}${key}`;
  }

  async put(key: string, value: unknown, ttlMs: number): Promise<void> {
    await this.redis.command(['SET', this.key(key), JSON.stringify(value), 'PX', Math.max(1, Math.ceil(ttlMs))]);
  }

  async replace(key: string, value: unknown, ttlMs: number): Promise<boolean> {
    return (await this.redis.command(['SET', this.key(key), JSON.stringify(value), 'PX', Math.max(1, Math.ceil(ttlMs)), 'XX'])) === 'OK';
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
    const args = [1, this.key(key), Math.max(1, Math.ceil(ttlMs))];
    try {
      return Number(await this.redis.command(['EVALSHA', COUNT_SCRIPT.sha, ...args]));
    } catch (error) {
      // NOSCRIPT: Redis does not know the script yet (or restarted); EVAL loads and runs it.
      if (!(error instanceof RedisReplyError && error.message.startsWith('NOSCRIPT'))) throw error;
    }
    return Number(await this.redis.command(['EVAL', COUNT_SCRIPT.source, ...args]));
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
