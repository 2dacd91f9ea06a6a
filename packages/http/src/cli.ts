#!/usr/bin/env node
// engage-mcp-http: the remote service. Reads its settings from the environment, prints one JSON
// line to stdout when it listens ({"url": …}), logs JSON lines to stderr, and on SIGTERM finishes
// the calls in flight, then exits 0.
import { readFileSync } from 'node:fs';
import { startTelemetry } from '@engage-mcp/shared';
import { misspelledSettings } from '@engage-mcp/shared/config';
import { connectRedis, RedisPaceKeeper, RedisSpentStore, type RedisClient } from './redis.js';
import { RedisGuardStore } from './redis-guard-store.js';
import { CATALOGS } from './catalogs.js';
import { MemoryOAuthStore, RedisOAuthStore } from './oauth/index.js';
import { startService, type Service } from './service.js';
import { HTTP_SETTING_NAMES, readHttpSettings, type HttpSettings } from './settings.js';
import { createJsonLog, type LogLevel } from './log.js';

// Every line of the CLI is written, whatever ENGAGE_LOG_LEVEL (which is for the service's own lines):
// they are few, and they say why the service did not start or stopped.
const log = createJsonLog({ level: 'debug' });
const line = (level: LogLevel, message: string) => log.emit(level, message);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
// A reader of the log that went away (a shipper that died, `| head`) must neither stop nor spin the
// service: unheard, a write's EPIPE was an uncaught error whose own log line failed the same way.
// What cannot be written is dropped.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

function notStarted(message: string): never {
  line('error', `not started: ${message}`);
  process.exit(2);
}

const NO_ARGUMENTS =
  'engage-mcp-http takes no arguments: its settings are environment variables (README, "Remote mode"), ' +
  'e.g. ENGAGE_BASE_URL=https://api.example.com ENGAGE_HTTP_PORT=8787 npm run serve.';

/** `npm run serve -- --port 9000` listened on 8787 as if nothing were said: an argument is refused, naming where settings go. */
function refuseArguments(args: string[]): void {
  if (args.length === 0) return;
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    process.stdout.write(`${NO_ARGUMENTS}\n`);
    process.exit(0);
  }
  notStarted(`${NO_ARGUMENTS} Got ${JSON.stringify(args.join(' ').slice(0, 80))}.`);
}

function readSettings(): HttpSettings {
  const read = readHttpSettings(process.env);
  if (read.ok) return read.settings;
  for (const problem of read.problems) line('error', problem);
  return notStarted('fix the settings above');
}

async function openRedis(settings: HttpSettings): Promise<RedisClient | undefined> {
  if (!settings.redisUrl) return undefined;
  let ca: Buffer | undefined;
  try {
    ca = settings.redisCaFile === undefined ? undefined : readFileSync(settings.redisCaFile);
  } catch (error) {
    notStarted(`ENGAGE_REDIS_CA_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? messageOf(error)})`);
  }
  try {
    return await connectRedis(settings.redisUrl, (message) => line('warn', message), ca ? { ca } : {});
  } catch (error) {
    return notStarted(`Redis at ENGAGE_REDIS_URL is not reachable (${messageOf(error)})`);
  }
}

async function start(settings: HttpSettings, redis: RedisClient | undefined): Promise<Service> {
  try {
    // Off unless the environment names an OTLP endpoint or exporter, for either signal (the core's
    // telemetrySignals); the service's close() stops it.
    const telemetry = await startTelemetry(process.env, log, { serviceName: 'engage-mcp-http' });
    return await startService({
      ...(telemetry ? { telemetry } : {}),
      env: process.env,
      catalogs: CATALOGS,
      host: settings.host,
      port: settings.port,
      allowedHosts: settings.allowedHosts,
      allowedOrigins: settings.allowedOrigins,
      maxBodyBytes: settings.maxBodyBytes,
      maxConcurrentPerKey: settings.maxConcurrentPerKey,
      maxConnections: settings.maxConnections,
      maxConnectionsPerAddress: settings.maxConnectionsPerAddress,
      maxSessions: settings.maxSessions,
      maxSessionsPerKey: settings.maxSessionsPerKey,
      // Who a caller is, behind a proxy: each client address's share of what keys not yet accepted may hold.
      trustedProxyHops: settings.trustedProxyHops,
      requestTimeoutMs: settings.requestTimeoutMs,
      drainTimeoutMs: settings.drainTimeoutMs,
      drainDelayMs: settings.drainDelayMs,
      secret: settings.secret,
      logLevel: settings.logLevel,
      ...(redis ? { spent: new RedisSpentStore(redis), pace: (keyId: string) => new RedisPaceKeeper(redis, keyId) } : {}),
      ...(settings.oauth ? { oauth: { ...settings.oauth, store: redis ? new RedisOAuthStore(redis) : new MemoryOAuthStore() } } : {}),
      // readHttpSettings requires ENGAGE_STATE_SECRET with Redis: the audit secret is derived from it.
      ...(redis && settings.secret ? { guardStore: new RedisGuardStore(redis, { stateSecret: settings.secret }) } : {}),
    });
  } catch (error) {
    await redis?.close().catch(() => undefined);
    return notStarted(messageOf(error));
  }
}

/** ENGAGE_READONLY=true was ignored without a word, every tenant's writes left on: a stdio server names such a name, and so does the service. */
function warnAboutMisspelledSettings(): void {
  const misspelled = misspelledSettings(process.env, process.platform, HTTP_SETTING_NAMES);
  if (misspelled) line('warn', misspelled);
}

function warnAboutHost(settings: HttpSettings): void {
  if (settings.host !== '127.0.0.1' && settings.host !== 'localhost' && settings.host !== '::1' && settings.allowedHosts === undefined) {
    const why = 'only requests whose Host is localhost are accepted. Set it to the public hostname(s) the proxy forwards.';
    line('warn', `listening on ${settings.host} but ENGAGE_ALLOWED_HOSTS is not set: ${why}`);
  }
}

function warnAboutOneReplica(redis: RedisClient | undefined, settings: HttpSettings): void {
  if (!redis && settings.oauth) {
    line('warn', 'OAuth grants are kept in this process (ENGAGE_REDIS_URL is not set): every connection ends when it restarts, and people sign in again.');
  }
  if (!redis && settings.secret) {
    line(
      'warn',
      'ENGAGE_STATE_SECRET is set without ENGAGE_REDIS_URL: confirmations are signed with a secret of this process instead, so none is honoured after a restart (the record that it was spent would be gone).',
    );
  }
  if (!redis) {
    line(
      'warn',
      "ENGAGE_REDIS_URL is not set: spent confirmation tokens, the API pace and the guardrails' counters, idempotency keys and audit record " +
        'are kept in this process. This service must not be replicated: ' +
        'run ONE replica only; to run several behind a load balancer, set ENGAGE_REDIS_URL and ENGAGE_STATE_SECRET on every replica.',
    );
  }
}

function stopOnSignals(service: Service, redis: RedisClient | undefined): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    line('info', `${signal}: finishing the calls in flight`);
    void service
      .close()
      .then(() => redis?.close())
      .catch((error: unknown) => line('error', `while stopping: ${messageOf(error)}`))
      .finally(() => process.exit(0));
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));
}

async function main(): Promise<void> {
  refuseArguments(process.argv.slice(2));
  const settings = readSettings();
  warnAboutMisspelledSettings();
  const redis = await openRedis(settings);
  warnAboutHost(settings);
  const service = await start(settings, redis);
  warnAboutOneReplica(redis, settings);
  // Before the URL is told: a supervisor (or a test) that stops the service as soon as it reads the
  // URL would otherwise meet the signal's default action, a kill with the calls in flight cut.
  stopOnSignals(service, redis);
  process.stdout.write(`${JSON.stringify({ url: service.url })}\n`);
  line('info', `listening on ${service.url}: /mcp (all tools) and /mcp/<domain>; /healthz, /readyz, /metrics`);
  if (settings.oauth) line('info', `OAuth on: issuer ${settings.oauth.publicUrl}; tenant keys ${settings.oauth.keyMode ? 'also accepted' : 'refused'}`);
  process.on('uncaughtException', (error) => line('error', `uncaught: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) => line('error', `unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : reason}`));
}

void main();
