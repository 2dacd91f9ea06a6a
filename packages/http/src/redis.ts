// Redis for the remote service: what replicas share. Spent confirmation nonces (single use across
// every replica, failing closed) and the pace of each API key (advisory, failing open to this
// replica's own pace). No dependency: a small RESP2 client over one pipelined TCP or TLS connection
// (rediss://, and ACL users: what managed Redis services require).
import { createHash, randomBytes } from 'node:crypto';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { CONFIRMATION_NOT_CHECKED, InputError, Pacer, type PaceKeeper, type SpentStore } from '@engage-mcp/shared';

export interface RedisClient {
  /** Sends one command; resolves with its reply (string, number, null, array), rejects on an error reply, a timeout or a lost connection. */
  command(args: Array<string | number>): Promise<unknown>;
  close(): Promise<void>;
}

/** An error reply from Redis (`-ERR ...`). Inside an array it is a value; as a command's reply it rejects. */
export class RedisReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisReplyError';
  }
}

/** Redis could not be reached or did not answer: the command may not have run (or its answer is unknown). */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedisUnavailableError';
  }
}

// ---------------------------------------------------------------------------------------------
// RESP2

export function encodeCommand(args: ReadonlyArray<string | number>): Buffer {
  let out = `*${args.length}\r\n`;
  for (const arg of args) {
    const text = typeof arg === 'number' ? String(arg) : arg;
    out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
  }
  return Buffer.from(out, 'utf8');
}

const INCOMPLETE = Symbol('incomplete');
type Parsed = { value: unknown; end: number } | typeof INCOMPLETE;

/** The largest reply accepted (a bulk string or array longer than this is a protocol error). */
const MAX_BULK_BYTES = 64 * 1024 * 1024;
const MAX_ARRAY_ITEMS = 1_000_000;

/**
 * An incremental RESP2 reply parser: feed it the bytes as they come, in any chunks; it calls
 * `onReply` once per complete reply, in order. A malformed stream throws from `feed`.
 */
export class RespParser {
  private buffer: Buffer = Buffer.alloc(0);

  constructor(private readonly onReply: (reply: unknown) => void) {}

  feed(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let offset = 0;
    while (offset < this.buffer.length) {
      const parsed = this.parse(offset);
      if (parsed === INCOMPLETE) break;
      offset = parsed.end;
      this.onReply(parsed.value);
    }
    this.buffer = offset === 0 ? this.buffer : this.buffer.subarray(offset);
    if (this.buffer.length === 0) this.buffer = Buffer.alloc(0);
  }

  /** Bytes held for a reply not yet complete. */
  get pendingBytes(): number {
    return this.buffer.length;
  }

  reset(): void {
    this.buffer = Buffer.alloc(0);
  }

  private line(offset: number): { text: string; end: number } | typeof INCOMPLETE {
    const at = this.buffer.indexOf('\r\n', offset, 'latin1');
    if (at < 0) {
      if (this.buffer.length - offset > 64 * 1024) throw new Error('Redis protocol error: a line longer than 64 KiB');
      return INCOMPLETE;
    }
    return { text: this.buffer.toString('utf8', offset, at), end: at + 2 };
  }

  private integer(text: string): number {
    if (!/^-?\d+$/.test(text)) throw new Error('Redis protocol error: not an integer');
    return Number(text);
  }

  private parse(offset: number): Parsed {
    if (offset >= this.buffer.length) return INCOMPLETE;
    const type = String.fromCharCode(this.buffer[offset] as number);
    const head = this.line(offset + 1);
    if (head === INCOMPLETE) return INCOMPLETE;
    switch (type) {
      case '+':
        return { value: head.text, end: head.end };
      case '-':
        return { value: new RedisReplyError(head.text), end: head.end };
      case ':':
        return { value: this.integer(head.text), end: head.end };
      case '$': {
        const length = this.integer(head.text);
        if (length === -1) return { value: null, end: head.end };
        if (length < 0 || length > MAX_BULK_BYTES) throw new Error('Redis protocol error: bad bulk length');
        if (this.buffer.length < head.end + length + 2) return INCOMPLETE;
        if (this.buffer[head.end + length] !== 13 || this.buffer[head.end + length + 1] !== 10)
          throw new Error('Redis protocol error: bulk string not terminated');
        return { value: this.buffer.toString('utf8', head.end, head.end + length), end: head.end + length + 2 };
      }
      case '*': {
        const count = this.integer(head.text);
        if (count === -1) return { value: null, end: head.end };
        if (count < 0 || count > MAX_ARRAY_ITEMS) throw new Error('Redis protocol error: bad array length');
        const items: unknown[] = [];
        let end = head.end;
        for (let index = 0; index < count; index++) {
          const item = this.parse(end);
          if (item === INCOMPLETE) return INCOMPLETE;
          items.push(item.value);
          end = item.end;
        }
        return { value: items, end };
      }
      default:
        throw new Error('Redis protocol error: unknown reply type');
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The client

export interface RedisClientOptions {
  /** How long one command may wait for its reply (default 2 s); then it rejects and the connection is dropped. */
  commandTimeoutMs?: number;
  /** Commands waiting for a reply at most (default 10,000); beyond, a command rejects at once. */
  maxPending?: number;
  /** How long the first connection (and each reconnection) may take (default 2 s). */
  connectTimeoutMs?: number;
  /** Reconnection backoff: from this (default 100 ms), doubling, up to maxBackoffMs (default 5 s). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * For rediss://: the certificate(s) of the CA that signed Redis's certificate (PEM), trusted besides
   * Node's own list (and NODE_EXTRA_CA_CERTS). The CLI reads it from ENGAGE_REDIS_CA_FILE.
   */
  ca?: string | Buffer;
}

interface Target {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  /** rediss://: TLS, the certificate checked against the host name. */
  tls: boolean;
  /** host:port, for messages: never the password. */
  label: string;
}

/** TLS errors that mean Redis's certificate is not one we trust (as opposed to Redis being down). */
const UNTRUSTED_CERTIFICATE = /^(SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_\w+|CERT_\w+|ERR_TLS_CERT_ALTNAME_INVALID)$/;

function parseRedisUrl(url: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('ENGAGE_REDIS_URL is not a URL: expected redis[s]://[[user]:password@]host:port[/db]');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`ENGAGE_REDIS_URL must start with redis:// or rediss:// (Redis over TLS), not ${parsed.protocol}//`);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const port = parsed.port === '' ? 6379 : Number(parsed.port);
  const path = parsed.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d+$/.test(path)) throw new Error('ENGAGE_REDIS_URL: the path must be a database number, as in redis://host:6379/0');
  const password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  const username = parsed.username === '' ? undefined : decodeURIComponent(parsed.username);
  return {
    host,
    port,
    ...(password !== undefined ? { password } : {}),
    ...(username !== undefined && password !== undefined ? { username } : {}),
    ...(path !== '' ? { db: Number(path) } : {}),
    tls: parsed.protocol === 'rediss:',
    label: `${host.includes(':') ? `[${host}]` : host}:${port}`,
  };
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  /** Settled already (timed out): its reply, when it comes, is dropped. */
  done: boolean;
  name: string;
}

class Connection implements RedisClient {
  /** Where this connection logs; the pace keepers on it log there too unless given their own. */
  readonly logLine: (line: string) => void;
  private socket: Socket | undefined;
  private ready = false;
  private closed = false;
  private readonly pending: Pending[] = [];
  private readonly parser = new RespParser((reply) => this.reply(reply));
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempts = 0;
  private readonly commandTimeoutMs: number;
  private readonly maxPending: number;
  private readonly connectTimeoutMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly ca: string | Buffer | undefined;

  constructor(
    private readonly target: Target,
    private readonly log: (line: string) => void,
    options: RedisClientOptions,
  ) {
    this.logLine = log;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 2_000;
    this.maxPending = options.maxPending ?? 10_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
    this.minBackoffMs = options.minBackoffMs ?? 100;
    this.maxBackoffMs = options.maxBackoffMs ?? 5_000;
    this.ca = options.ca;
  }

  /** Opens the connection (TLS for rediss://) and sends AUTH and SELECT; resolves once it is usable. */
  open(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const socket = this.dial();
      this.socket = socket;
      this.parser.reset();
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      };
      const late = () => new RedisUnavailableError(`Redis at ${this.target.label} did not accept a connection within ${this.connectTimeoutMs} ms`);
      const timer = setTimeout(() => fail(late()), this.connectTimeoutMs);
      this.listen(socket, (error) => (settled ? undefined : fail(error)));
      socket.once(this.target.tls ? 'secureConnect' : 'connect', () => {
        this.handshake().then(() => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.ready = true;
          this.attempts = 0;
          resolve();
        }, fail);
      });
    });
  }

  private dial(): Socket {
    const { host, port } = this.target;
    // SNI only for a name: an address is checked against the certificate's IP entries.
    const servername = isIP(host) === 0 ? host : undefined;
    const tlsOptions = { ...(servername ? { servername } : {}), ...(this.ca ? { ca: this.ca } : {}) };
    const socket = this.target.tls ? connectTls({ host, port, ...tlsOptions }) : connectTcp({ host, port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    return socket;
  }

  /** The socket's events; `failOpening` is told of an error or close while the connection is being opened. */
  private listen(socket: Socket, failOpening: (error: Error) => void): void {
    socket.on('data', (chunk: Buffer) => {
      try {
        this.parser.feed(chunk);
      } catch (error) {
        this.log(`redis: ${(error as Error).message} from ${this.target.label}; dropping the connection`);
        socket.destroy();
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.lastError = error.code ?? 'error';
      failOpening(this.unreachable(error));
    });
    socket.on('close', () => {
      if (this.socket === socket) this.dropped();
      failOpening(new RedisUnavailableError(`Redis at ${this.target.label} closed the connection`));
    });
  }

  private unreachable(error: NodeJS.ErrnoException): RedisUnavailableError {
    const code = error.code ?? 'error';
    if (this.target.tls && UNTRUSTED_CERTIFICATE.test(code)) {
      const hint = 'set ENGAGE_REDIS_CA_FILE to the CA certificate that signed it (PEM), or NODE_EXTRA_CA_CERTS';
      return new RedisUnavailableError(`Redis at ${this.target.label} presented a TLS certificate that is not trusted (${code}): ${hint}`);
    }
    return new RedisUnavailableError(`Redis at ${this.target.label} is unreachable (${code})`);
  }

  /** AUTH (a password, or an ACL user and password), SELECT, PING. */
  private async handshake(): Promise<void> {
    const { username, password, db } = this.target;
    const steps: Array<Promise<unknown>> = [];
    if (password !== undefined) steps.push(this.send(username !== undefined ? ['AUTH', username, password] : ['AUTH', password], true));
    if (db !== undefined) steps.push(this.send(['SELECT', db], true));
    steps.push(this.send(['PING'], true));
    try {
      await Promise.all(steps);
    } catch (error) {
      if (!(error instanceof RedisReplyError)) throw error;
      // WRONGPASS, NOAUTH, NOPERM, a bad db: Redis's first word only, which never carries the password.
      const reason = error.message.split(' ')[0] ?? 'error';
      const hint = /^(WRONGPASS|NOAUTH|NOPERM)$/.test(reason) ? ': check the user and password in ENGAGE_REDIS_URL' : '';
      throw new RedisUnavailableError(`Redis at ${this.target.label} refused the connection (${reason})${hint}`);
    }
  }

  private lastError = '';

  private dropped(): void {
    const wasReady = this.ready;
    this.ready = false;
    this.socket = undefined;
    this.parser.reset();
    // Commands in flight are never sent again: their effect (a SET NX) may have happened.
    const lost = this.pending.splice(0);
    for (const entry of lost)
      this.settle(entry, new RedisUnavailableError(`the connection to Redis at ${this.target.label} was lost before ${entry.name} was answered`));
    if (this.closed) return;
    if (wasReady) this.log(`redis: connection to ${this.target.label} lost${this.lastError ? ` (${this.lastError})` : ''}; reconnecting`);
    this.lastError = '';
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const ceiling = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** this.attempts);
    const delay = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
    this.attempts += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closed) return;
      this.open().then(
        () => this.log(`redis: reconnected to ${this.target.label}`),
        (error: Error) => {
          if (this.closed) return;
          if (this.attempts === 1 || this.attempts % 10 === 0) this.log(`redis: ${error.message}; retrying`);
          // The socket's close already scheduled the next try, unless it never opened.
          if (!this.socket) this.scheduleReconnect();
        },
      );
    }, delay);
    this.reconnectTimer.unref();
  }

  private reply(reply: unknown): void {
    const entry = this.pending.shift();
    if (!entry) {
      this.log(`redis: an unexpected reply from ${this.target.label}; dropping the connection`);
      this.socket?.destroy();
      return;
    }
    if (entry.done) return;
    entry.done = true;
    clearTimeout(entry.timer);
    if (reply instanceof RedisReplyError) entry.reject(reply);
    else entry.resolve(reply);
  }

  private settle(entry: Pending, error: Error): void {
    if (entry.done) return;
    entry.done = true;
    clearTimeout(entry.timer);
    entry.reject(error);
  }

  command(args: Array<string | number>): Promise<unknown> {
    if (this.closed) return Promise.reject(new RedisUnavailableError('the Redis client is closed'));
    if (!this.ready) return Promise.reject(new RedisUnavailableError(`Redis at ${this.target.label} is not connected (reconnecting)`));
    return this.send(args, false);
  }

  private send(args: Array<string | number>, handshake: boolean): Promise<unknown> {
    const socket = this.socket;
    if (!socket || (!handshake && !this.ready)) return Promise.reject(new RedisUnavailableError(`Redis at ${this.target.label} is not connected`));
    const name = String(args[0] ?? '').toUpperCase();
    if (this.pending.length >= this.maxPending)
      return Promise.reject(new RedisUnavailableError(`too many Redis commands waiting (${this.maxPending}); ${name} was not sent`));
    return new Promise<unknown>((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        done: false,
        name,
        timer: setTimeout(() => {
          this.settle(entry, new RedisUnavailableError(`Redis at ${this.target.label} did not answer ${name} within ${this.commandTimeoutMs} ms`));
          // A connection that stopped answering is dropped: the replies still owed would be misread.
          if (this.socket === socket) {
            this.log(`redis: ${this.target.label} did not answer ${name} within ${this.commandTimeoutMs} ms; dropping the connection`);
            socket.destroy();
          }
        }, this.commandTimeoutMs),
      };
      this.pending.push(entry);
      socket.write(encodeCommand(args));
    });
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const socket = this.socket;
    if (!socket) return Promise.resolve();
    return new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      // Replies still owed are given a moment; then the socket goes regardless.
      socket.end();
      setTimeout(() => socket.destroy(), 500).unref();
    });
  }
}

/**
 * Connects to redis[s]://[[user]:password@]host:port[/db] (rediss://: over TLS). Rejects if Redis
 * cannot be reached, or refuses AUTH or SELECT, at start; later drops reconnect with backoff.
 */
export async function connectRedis(url: string, log: (line: string) => void = () => {}, options: RedisClientOptions = {}): Promise<RedisClient> {
  const connection = new Connection(parseRedisUrl(url), log, options);
  try {
    await connection.open();
  } catch (error) {
    await connection.close();
    throw error;
  }
  return connection;
}

// ---------------------------------------------------------------------------------------------
// Commands owed to Redis

/** What is owed for one Redis key: the items (owner ids, an answer) whose command went unanswered. */
interface Debt {
  items: string[];
  expiresAt: number;
  tries: number;
  timer?: NodeJS.Timeout;
}

/** Keys an Owed remembers at most: beyond, what a new one owes is not done again (it waits for its expiry in Redis). */
export const OWED_KEYS = 10_000;

/**
 * What a store sent to Redis without hearing back (a command whose reply was lost, which Redis
 * may have applied when it resumed, or not; one sent while the connection was being made again)
 * and must see done: done again as soon as Redis answers, first thing on the same key's next use
 * here, else in the background (from 100 ms, up to every 2 s) until `expiresAt`. `redo` must be
 * safe to repeat and touch only what its items name (an owner's reservation or mark, a record's answer).
 */
export class Owed {
  private readonly pending = new Map<string, Debt>();

  constructor(private readonly redo: (key: string, items: string[]) => Promise<unknown>) {}

  /** This key's debt done now; a store that does not answer throws (the call fails, closed). */
  async now(key: string): Promise<void> {
    const entry = this.pending.get(key);
    if (!entry) return;
    const items = [...entry.items];
    await this.redo(key, items);
    this.done(key, entry, items);
  }

  /** Whether it was kept: past OWED_KEYS keys a new one is not (its caller must not count on it being made). */
  remember(key: string, item: string, expiresAt: number): boolean {
    const known = this.pending.get(key);
    if (known) {
      known.items.push(item);
      known.expiresAt = Math.max(known.expiresAt, expiresAt);
      return true;
    }
    if (this.pending.size >= OWED_KEYS) return false;
    const entry: Debt = { items: [item], expiresAt, tries: 0 };
    this.pending.set(key, entry);
    this.retry(key, entry);
    return true;
  }

  /** Redis answered for `items`: those are done; any remembered meanwhile still wait. */
  private done(key: string, entry: Debt, items: string[]): boolean {
    entry.items = entry.items.filter((item) => !items.includes(item));
    if (entry.items.length > 0) return false;
    this.forget(key, entry);
    return true;
  }

  private forget(key: string, entry: Debt): void {
    clearTimeout(entry.timer);
    if (this.pending.get(key) === entry) this.pending.delete(key);
  }

  /** Tries nothing more (its store is closed): what is still owed is left to the marks' leases and expiries. */
  stop(): void {
    for (const [key, entry] of this.pending) this.forget(key, entry);
  }

  private retry(key: string, entry: Debt): void {
    const delay = Math.min(2_000, 100 * 2 ** Math.min(entry.tries, 10));
    entry.tries += 1;
    entry.timer = setTimeout(() => {
      if (this.pending.get(key) !== entry) return;
      if (Date.now() >= entry.expiresAt) return this.forget(key, entry);
      const items = [...entry.items];
      this.redo(key, items).then(
        () => void (this.done(key, entry, items) || this.retry(key, entry)),
        () => this.retry(key, entry),
      );
    }, delay);
    entry.timer.unref();
  }
}

// ---------------------------------------------------------------------------------------------
// Spent confirmation nonces

/** How long a spent nonce is kept past its value's life: replicas' clocks may differ by that much and not run it twice. */
export const SPENT_KEPT_PAST_EXPIRY_MS = 24 * 60 * 60 * 1000;

/** What a consume Redis did not answer tells the model (the text is the call's, in shared/src/call/outcomes.ts). */
export const SPENT_STORE_UNAVAILABLE = CONFIRMATION_NOT_CHECKED;

// A nonce's entry is a hash: `run` names the attempt that spent it; `unrun:<attempt>` marks an
// attempt whose consume went unanswered and which was therefore never run. A consume that Redis
// applies late (it stalled holding the command) finds its own mark and takes nothing, so the
// token stays free for the next attempt, which runs once. A plain string (an older replica's
// SET NX) is spent. ARGV: attempt, its lifetime from now (whole ms: Redis measures it by its own
// clock), then attempts of this nonce to mark unrun.
const SETTLE = `
if redis.call('TYPE', KEYS[1]).ok == 'string' then return 0 end
local mine = ARGV[1]
for index = 3, #ARGV do
  if redis.call('HGET', KEYS[1], 'run') == ARGV[index] then redis.call('HDEL', KEYS[1], 'run') end
  redis.call('HSET', KEYS[1], 'unrun:' .. ARGV[index], '1')
end
local taken = 0
if mine ~= '' and redis.call('HEXISTS', KEYS[1], 'unrun:' .. mine) == 0 and redis.call('HSETNX', KEYS[1], 'run', mine) == 1 then taken = 1 end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return taken
`;
const SETTLE_SCRIPT = { source: SETTLE, sha: createHash('sha1').update(SETTLE).digest('hex') };

/** Attempts whose consume went unanswered, per nonce: marked unrun in Redis as soon as it answers. */
interface Unanswered {
  attempts: string[];
  expiresAt: number;
  timer?: NodeJS.Timeout;
  tries: number;
}

export interface RedisSpentStoreOptions {
  /** Nonces with unanswered attempts kept at most (default 10,000); beyond, such a token stays spent (never run twice). */
  maxUnanswered?: number;
  /** The first retry of marking an attempt unrun (default 100 ms), doubling up to 2 s, until the token expires. */
  retryMs?: number;
  /** How long a spent nonce is kept past its value's life (default SPENT_KEPT_PAST_EXPIRY_MS). */
  keptPastExpiryMs?: number;
  now?: () => number;
}

/**
 * Single use across replicas, failing closed: a nonce's entry expires when the value itself does.
 * When Redis does not answer a consume, nothing is run, and the attempt is marked unrun (in the
 * background, until the token expires, and first thing on this replica's next consume of it), so
 * the same token, asked again, runs once; a consume Redis applies late can never spend it.
 */
export class RedisSpentStore implements SpentStore {
  private readonly unanswered = new Map<string, Unanswered>();
  private readonly maxUnanswered: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly keptPastExpiryMs: number;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix = 'engage:spent:',
    options: RedisSpentStoreOptions = {},
  ) {
    this.maxUnanswered = options.maxUnanswered ?? 10_000;
    this.retryMs = options.retryMs ?? 100;
    this.now = options.now ?? Date.now;
    this.keptPastExpiryMs = options.keptPastExpiryMs ?? SPENT_KEPT_PAST_EXPIRY_MS;
  }

  /** Nonces with an attempt not yet known to Redis as unrun (for tests and metrics). */
  get unsettled(): number {
    return this.unanswered.size;
  }

  async consume(nonce: string, expiresAt: number): Promise<boolean> {
    const attempt = randomBytes(12).toString('base64url');
    const pending = this.unanswered.get(nonce);
    const unrun = [...(pending?.attempts ?? [])];
    let reply: unknown;
    try {
      reply = await this.settle(nonce, expiresAt, attempt, unrun);
    } catch {
      this.remember(nonce, expiresAt, attempt);
      throw new InputError(SPENT_STORE_UNAVAILABLE);
    }
    if (reply === 1 || reply === 0) {
      if (pending) this.marked(nonce, pending, unrun);
      return reply === 1;
    }
    // Anything else is not an answer we understand: never read as a first use (and this attempt may yet have spent it).
    this.remember(nonce, expiresAt, attempt);
    throw new InputError(SPENT_STORE_UNAVAILABLE);
  }

  /** Runs SETTLE for `attempt` ('' to only mark `unrun`); its reply as Redis gave it. */
  private async settle(nonce: string, expiresAt: number, attempt: string, unrun: string[]): Promise<unknown> {
    // A lifetime, not a time on this replica's clock: one behind Redis's by more than a token's life
    // would have its nonce deleted as it was spent. A day past the value's life by this replica's clock:
    // one running fast kept it for moments, and a replica with a right clock, to which the value was
    // still good, ran it again.
    const args = [1, `${this.prefix}${nonce}`, attempt, Math.max(1, Math.ceil(expiresAt - this.now()) + this.keptPastExpiryMs), ...unrun];
    try {
      return await this.redis.command(['EVALSHA', SETTLE_SCRIPT.sha, ...args]);
    } catch (error) {
      // NOSCRIPT: the script did not run (Redis restarted, or never saw it); EVAL loads and runs it.
      if (!(error instanceof RedisReplyError && error.message.startsWith('NOSCRIPT'))) throw error;
      return await this.redis.command(['EVAL', SETTLE_SCRIPT.source, ...args]);
    }
  }

  private remember(nonce: string, expiresAt: number, attempt: string): void {
    const known = this.unanswered.get(nonce);
    if (known) {
      known.attempts.push(attempt);
      return;
    }
    // Bounded memory: a token whose attempt is forgotten stays spent if that consume lands late, never runs twice.
    if (this.unanswered.size >= this.maxUnanswered) return;
    const entry: Unanswered = { attempts: [attempt], expiresAt, tries: 0 };
    this.unanswered.set(nonce, entry);
    this.retry(nonce, entry);
  }

  private forget(nonce: string, entry: Unanswered): void {
    clearTimeout(entry.timer);
    if (this.unanswered.get(nonce) === entry) this.unanswered.delete(nonce);
  }

  /** Redis answered a SETTLE that marked `unrun`: those attempts are settled; the others still wait. */
  private marked(nonce: string, entry: Unanswered, unrun: string[]): boolean {
    entry.attempts = entry.attempts.filter((attempt) => !unrun.includes(attempt));
    if (entry.attempts.length > 0) return false;
    this.forget(nonce, entry);
    return true;
  }

  /** Marks the unanswered attempts unrun once Redis answers; gives up when the token expires (nothing can redeem it then). */
  private retry(nonce: string, entry: Unanswered): void {
    const delay = Math.min(2_000, this.retryMs * 2 ** Math.min(entry.tries, 10));
    entry.tries += 1;
    entry.timer = setTimeout(() => {
      if (this.unanswered.get(nonce) !== entry) return;
      if (this.now() >= entry.expiresAt) return this.forget(nonce, entry);
      const marked = [...entry.attempts];
      this.settle(nonce, entry.expiresAt, '', marked).then(
        (reply) => {
          if (reply !== 0 || !this.marked(nonce, entry, marked)) this.retry(nonce, entry);
        },
        () => this.retry(nonce, entry),
      );
    }, delay);
    entry.timer.unref();
  }
}

// ---------------------------------------------------------------------------------------------
// The pace of a key, shared by replicas

/** How long an idle key's pace is kept after its last change (beyond any slot still ahead). */
export const PACE_TTL_MS = 5 * 60 * 1000;

// Each script reads the clock from ARGV[1] (the caller's, in ms) or, when it is empty, from Redis
// TIME, so every replica uses one clock. The hash: remaining (absent: unknown, i.e. unlimited),
// intervalMs (absent: 1000), nextSlotAt (absent: 0). Numbers are written with %d (whole ms).
const CLOCK = `
local now = tonumber(ARGV[1])
if now == nil then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local state = redis.call('HMGET', KEYS[1], 'remaining', 'intervalMs', 'nextSlotAt')
local remaining = tonumber(state[1])
local interval = tonumber(state[2]) or 1000
local nextSlot = tonumber(state[3]) or 0
local ttl = tonumber(ARGV[2])
local function keep()
  local ahead = nextSlot - now
  if ahead < 0 then ahead = 0 end
  redis.call('PEXPIRE', KEYS[1], string.format('%d', ttl + ahead))
end
`;

/** ARGV: now, ttl, maxWaitMs. Returns the wait (0: go now), or -1 if longer than maxWaitMs. */
const RESERVE = `${CLOCK}
local maxWait = tonumber(ARGV[3])
if (remaining == nil or remaining > 0) and now >= nextSlot then
  if remaining ~= nil then
    redis.call('HSET', KEYS[1], 'remaining', string.format('%d', remaining - 1))
    keep()
  end
  return 0
end
local slot = math.max(now, nextSlot)
if slot - now > maxWait then return -1 end
nextSlot = slot + interval
redis.call('HSET', KEYS[1], 'nextSlotAt', string.format('%d', nextSlot))
keep()
return slot - now
`;

/** ARGV: now, ttl, limit, remaining, resetSeconds ('' for absent). */
const OBSERVE = `${CLOCK}
local limit = tonumber(ARGV[3])
local seen = tonumber(ARGV[4])
local reset = tonumber(ARGV[5])
if limit ~= nil and limit > 0 then
  interval = math.ceil(60000 / limit)
  redis.call('HSET', KEYS[1], 'intervalMs', string.format('%d', interval))
end
if seen ~= nil then
  redis.call('HSET', KEYS[1], 'remaining', string.format('%d', seen))
  if seen == 0 then
    local refill = interval
    if reset ~= nil and reset > 0 then refill = math.min(reset * 1000, interval) end
    nextSlot = math.max(nextSlot, now + refill)
    redis.call('HSET', KEYS[1], 'nextSlotAt', string.format('%d', nextSlot))
  end
end
if (limit ~= nil and limit > 0) or seen ~= nil then keep() end
return 0
`;

/** ARGV: now, ttl, waitMs, capMs. */
const HOLD = `${CLOCK}
local wait = math.min(math.max(0, tonumber(ARGV[3])), tonumber(ARGV[4]))
nextSlot = math.max(nextSlot, now + wait)
redis.call('HSET', KEYS[1], 'remaining', '0', 'nextSlotAt', string.format('%d', nextSlot))
keep()
return 0
`;

/** ARGV: now, ttl. */
const ESTIMATE = `${CLOCK}
return math.max(0, nextSlot - now)
`;

interface Script {
  source: string;
  sha: string;
}
const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });
const SCRIPTS = { reserve: script(RESERVE), observe: script(OBSERVE), hold: script(HOLD), estimate: script(ESTIMATE) };

/** Whether the shared pace is failing, per Redis client: an outage is logged once, not once per key. */
const outages = new WeakMap<RedisClient, { down: boolean }>();

export interface RedisPaceOptions {
  /** The clock passed to Redis (ms). Default: none, the scripts use Redis TIME, one clock for every replica. */
  now?: () => number;
  /** The pace used while Redis fails (default: a Pacer on `now` or Date.now). */
  fallback?: Pacer;
  /** Default: the log given to connectRedis. */
  log?: (line: string) => void;
  ttlMs?: number;
}

/**
 * The Pacer's semantics (see shared/src/upstream/pacing.ts), with the state of one API key in one Redis hash
 * shared by every replica, changed atomically by Lua scripts. Pacing is advisory: while Redis
 * fails, this replica keeps its own pace (logged once per outage and Redis client, whatever the
 * number of keys).
 */
export class RedisPaceKeeper implements PaceKeeper {
  private readonly key: string;
  private readonly fallback: Pacer;
  private readonly log: (line: string) => void;
  private readonly now: (() => number) | undefined;
  private readonly ttlMs: number;
  private degraded = false;
  private readonly outage: { down: boolean };

  constructor(
    private readonly redis: RedisClient,
    keyFingerprint: string,
    prefix = 'engage:pace:',
    options: RedisPaceOptions = {},
  ) {
    this.key = `${prefix}${keyFingerprint}`;
    this.now = options.now;
    this.fallback = options.fallback ?? new Pacer(options.now);
    this.log = options.log ?? (redis as Partial<Connection>).logLine ?? (() => {});
    if (!outages.has(redis)) outages.set(redis, { down: false });
    this.outage = outages.get(redis) as { down: boolean };
    this.ttlMs = options.ttlMs ?? PACE_TTL_MS;
  }

  /** True while the last Redis call failed and the local pace is used. */
  get usingFallback(): boolean {
    return this.degraded;
  }

  async reserve(maxWaitMs: number): Promise<number | undefined> {
    const wait = await this.run(SCRIPTS.reserve, [Math.max(0, Math.floor(maxWaitMs))]);
    if (wait === undefined) return this.fallback.reserve(maxWaitMs);
    return wait < 0 ? undefined : wait;
  }

  async observe(limit: number | undefined, remaining: number | undefined, resetSeconds: number | undefined): Promise<void> {
    // The local pace learns too, so a fallback starts from what was last known.
    this.fallback.observe(limit, remaining, resetSeconds);
    await this.run(SCRIPTS.observe, [whole(limit), whole(remaining), whole(resetSeconds)]);
  }

  async hold(waitMs: number, capMs: number): Promise<void> {
    this.fallback.hold(waitMs, capMs);
    await this.run(SCRIPTS.hold, [Math.floor(waitMs), Math.floor(capMs)]);
  }

  async waitEstimateMs(): Promise<number> {
    const estimate = await this.run(SCRIPTS.estimate, []);
    return estimate === undefined ? this.fallback.waitEstimateMs() : estimate;
  }

  /** Runs a script; undefined when Redis failed (the caller falls back). */
  private async run(code: Script, extra: Array<string | number>): Promise<number | undefined> {
    const args = [1, this.key, this.now ? Math.floor(this.now()) : '', this.ttlMs, ...extra];
    try {
      let reply: unknown;
      try {
        reply = await this.redis.command(['EVALSHA', code.sha, ...args]);
      } catch (error) {
        if (!(error instanceof RedisReplyError && error.message.startsWith('NOSCRIPT'))) throw error;
        reply = await this.redis.command(['EVAL', code.source, ...args]);
      }
      if (typeof reply !== 'number') throw new Error('an unexpected reply to a pacing script');
      this.degraded = false;
      if (this.outage.down) {
        this.outage.down = false;
        this.log('redis: the shared pace is back');
      }
      return reply;
    } catch (error) {
      this.degraded = true;
      if (!this.outage.down) {
        this.outage.down = true;
        this.log(`redis: the shared pace is unavailable (${(error as Error).message}); this replica paces each key on its own until it is back`);
      }
      return undefined;
    }
  }
}

function whole(value: number | undefined): string | number {
  return value === undefined || !Number.isFinite(value) ? '' : Math.floor(value);
}
