// Remote mode's own settings, from the environment. A bad one refuses the start: a service that
// many people reach must not come up half-configured.
import { parseKek } from './oauth/crypto.js';

export interface HttpSettings {
  host: string;
  port: number;
  allowedHosts: string[] | undefined;
  allowedOrigins: string[] | undefined;
  maxBodyBytes: number;
  maxConcurrentPerKey: number;
  /** ENGAGE_HTTP_MAX_CONNECTIONS: open TCP connections, all clients together (0: no cap). */
  maxConnections: number;
  /** ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: open TCP connections from one address (0: no cap); refused with ENGAGE_TRUSTED_PROXY_HOPS (the proxy's address is every client's). */
  maxConnectionsPerAddress: number;
  /** ENGAGE_HTTP_MAX_SESSIONS: 2025 sessions of keys the API has accepted, all together (more are refused 503). */
  maxSessions: number;
  /** ENGAGE_HTTP_MAX_SESSIONS_PER_KEY: 2025 sessions of one key (a new one ends that key's least recently used). */
  maxSessionsPerKey: number;
  requestTimeoutMs: number;
  drainTimeoutMs: number;
  drainDelayMs: number;
  redisUrl: string | undefined;
  /** ENGAGE_REDIS_CA_FILE: a PEM file of the CA that signed Redis's TLS certificate (a private CA). */
  redisCaFile: string | undefined;
  /** ENGAGE_STATE_SECRET's bytes (UTF-8), when set. */
  secret: Uint8Array | undefined;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  /** OAuth (ENGAGE_OAUTH_KEK set): the KEK, the public origin, and whether tenant keys are still accepted. */
  oauth: OAuthSettings | undefined;
  /** ENGAGE_TRUSTED_PROXY_HOPS: who a caller is behind proxies (OAuth's limits, each client address's share of what keys not yet accepted hold). */
  trustedProxyHops: number;
}

const MIN_SECRET_BYTES = 32;

/** Every name this module reads: a name within two letters of one is taken for a misspelling of it (cli.ts). */
export const HTTP_SETTING_NAMES: readonly string[] = [
  'ENGAGE_HTTP_HOST',
  'ENGAGE_HTTP_PORT',
  'ENGAGE_ALLOWED_HOSTS',
  'ENGAGE_ALLOWED_ORIGINS',
  'ENGAGE_HTTP_MAX_BODY_BYTES',
  'ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY',
  'ENGAGE_HTTP_MAX_CONNECTIONS',
  'ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS',
  'ENGAGE_HTTP_MAX_SESSIONS',
  'ENGAGE_HTTP_MAX_SESSIONS_PER_KEY',
  'ENGAGE_HTTP_REQUEST_TIMEOUT_MS',
  'ENGAGE_HTTP_DRAIN_TIMEOUT_MS',
  'ENGAGE_HTTP_DRAIN_DELAY_MS',
  'ENGAGE_REDIS_URL',
  'ENGAGE_REDIS_CA_FILE',
  'ENGAGE_STATE_SECRET',
  'ENGAGE_LOG_LEVEL',
  'ENGAGE_OAUTH_KEK',
  'ENGAGE_PUBLIC_URL',
  'ENGAGE_OAUTH_KEY_MODE',
  'ENGAGE_TRUSTED_PROXY_HOPS',
];

export interface OAuthSettings {
  kek: Uint8Array;
  publicUrl: string;
  keyMode: boolean;
  /** ENGAGE_TRUSTED_PROXY_HOPS: how many proxies in front write X-Forwarded-For (0: none; the socket's address counts). */
  trustedProxyHops: number;
}

export function readHttpSettings(env: NodeJS.ProcessEnv): { ok: true; settings: HttpSettings } | { ok: false; problems: string[] } {
  const reader = new SettingsReader(env);
  const { integer, list, read, problems } = reader;
  const store = readStoreSettings(env, reader);
  const level = read('ENGAGE_LOG_LEVEL') ?? 'info';
  if (!['error', 'warn', 'info', 'debug'].includes(level)) problems.push('ENGAGE_LOG_LEVEL must be one of error, warn, info, debug.');

  const trustedProxyHops = integer('ENGAGE_TRUSTED_PROXY_HOPS', 0, 0, 10);
  const oauth = readOAuthSettings(read, problems, trustedProxyHops);
  const maxConnectionsPerAddress = integer('ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 0, 0, 1_000_000);
  if (maxConnectionsPerAddress > 0 && trustedProxyHops > 0)
    problems.push(
      'ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS is set with ENGAGE_TRUSTED_PROXY_HOPS: behind a proxy every connection comes from its address, so the cap would refuse everyone. Cap connections per client at the proxy, and leave this unset.',
    );
  const settings: HttpSettings = {
    host: read('ENGAGE_HTTP_HOST') ?? '127.0.0.1',
    port: integer('ENGAGE_HTTP_PORT', 8787, 0, 65_535),
    allowedHosts: list('ENGAGE_ALLOWED_HOSTS'),
    allowedOrigins: list('ENGAGE_ALLOWED_ORIGINS'),
    maxBodyBytes: integer('ENGAGE_HTTP_MAX_BODY_BYTES', 4 * 1024 * 1024 + 64 * 1024, 1_024, 64 * 1024 * 1024),
    maxConcurrentPerKey: integer('ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY', 16, 1, 10_000),
    maxConnections: integer('ENGAGE_HTTP_MAX_CONNECTIONS', 16_384, 0, 1_000_000),
    maxConnectionsPerAddress,
    maxSessions: integer('ENGAGE_HTTP_MAX_SESSIONS', 10_000, 1, 1_000_000),
    maxSessionsPerKey: integer('ENGAGE_HTTP_MAX_SESSIONS_PER_KEY', 100, 1, 100_000),
    requestTimeoutMs: integer('ENGAGE_HTTP_REQUEST_TIMEOUT_MS', 12 * 60 * 1000, 1_000, 60 * 60 * 1000),
    drainTimeoutMs: integer('ENGAGE_HTTP_DRAIN_TIMEOUT_MS', 30_000, 0, 10 * 60 * 1000),
    drainDelayMs: integer('ENGAGE_HTTP_DRAIN_DELAY_MS', 0, 0, 60 * 1000),
    ...store,
    logLevel: level as HttpSettings['logLevel'],
    oauth,
    trustedProxyHops,
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, settings };
}

/** Reads settings by name, noting each problem rather than stopping at the first: the operator sees them all. */
class SettingsReader {
  readonly problems: string[] = [];
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** Trimmed; unset and empty are both undefined. */
  readonly read = (name: string): string | undefined => {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  readonly integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = this.read(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) this.problems.push(`${name} must be a whole number from ${min} to ${max}.`);
    return Number.isFinite(value) ? value : fallback;
  };

  readonly list = (name: string): string[] | undefined =>
    this.read(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
}

/** Redis, its CA, and the secret the replicas share (required with Redis). */
function readStoreSettings(env: NodeJS.ProcessEnv, { read, problems }: SettingsReader): Pick<HttpSettings, 'redisUrl' | 'redisCaFile' | 'secret'> {
  const redisUrl = read('ENGAGE_REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('ENGAGE_REDIS_URL must be a redis:// or rediss:// (Redis over TLS) address, as in rediss://user:password@host:6380.');
  }
  const redisCaFile = read('ENGAGE_REDIS_CA_FILE');
  if (redisCaFile !== undefined && !redisUrl?.startsWith('rediss://')) {
    problems.push('ENGAGE_REDIS_CA_FILE is set but ENGAGE_REDIS_URL is not a rediss:// address.');
  }
  // Not trimmed: the secret's bytes are what every replica must share exactly.
  const rawSecret = env.ENGAGE_STATE_SECRET;
  const secret = rawSecret === undefined || rawSecret === '' ? undefined : new TextEncoder().encode(rawSecret);
  if (secret && secret.length < MIN_SECRET_BYTES)
    problems.push(
      `ENGAGE_STATE_SECRET is shorter than ${MIN_SECRET_BYTES} bytes: use a random value of at least ${MIN_SECRET_BYTES} bytes (e.g. openssl rand -base64 48).`,
    );
  if (redisUrl !== undefined && !secret)
    problems.push(
      `ENGAGE_STATE_SECRET is required with ENGAGE_REDIS_URL: every replica must verify the confirmation tokens the others issue (at least ${MIN_SECRET_BYTES} bytes, the same on every replica).`,
    );
  return { redisUrl, redisCaFile, secret };
}

/** ENGAGE_OAUTH_KEK turns OAuth on; ENGAGE_PUBLIC_URL is then required (https; http only on loopback); ENGAGE_OAUTH_KEY_MODE=off refuses tenant keys. */
function readOAuthSettings(read: (name: string) => string | undefined, problems: string[], trustedProxyHops: number): OAuthSettings | undefined {
  const rawKek = read('ENGAGE_OAUTH_KEK');
  const rawUrl = read('ENGAGE_PUBLIC_URL');
  const keyMode = read('ENGAGE_OAUTH_KEY_MODE') ?? 'on';
  if (!['on', 'off'].includes(keyMode)) problems.push('ENGAGE_OAUTH_KEY_MODE must be on or off.');
  if (rawKek === undefined) {
    if (keyMode === 'off') problems.push('ENGAGE_OAUTH_KEY_MODE=off needs OAuth: set ENGAGE_OAUTH_KEK and ENGAGE_PUBLIC_URL.');
    return undefined;
  }
  const kek = parseKek(rawKek);
  if (!kek) problems.push('ENGAGE_OAUTH_KEK must be 32 random bytes as base64 or hex (e.g. openssl rand -base64 32).');
  const publicUrl = rawUrl === undefined ? undefined : publicOrigin(rawUrl);
  if (!publicUrl) {
    problems.push(
      'ENGAGE_PUBLIC_URL must be set with ENGAGE_OAUTH_KEK: the public https origin clients reach (https://mcp.example.com); http only on localhost.',
    );
  }
  return kek && publicUrl ? { kek, publicUrl, keyMode: keyMode === 'on', trustedProxyHops } : undefined;
}

function publicOrigin(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return undefined;
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) return undefined;
  return url.origin;
}
