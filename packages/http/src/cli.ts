#!/usr/bin/env node
// engage-mcp-http: the remote service. Reads its settings from the environment, prints one JSON
// line to stdout when it listens ({"url": …}), logs JSON lines to stderr, and on SIGTERM finishes
// the calls in flight, then exits 0.
import { connectRedis, RedisPaceKeeper, RedisSpentStore, type RedisClient } from './redis.js';
import { CATALOGS } from './catalogs.js';
import { StartupError, startService, type Service } from './service.js';
import { readHttpSettings } from './settings.js';
import { createJsonLog, type LogLevel } from './log.js';

// Every line of the CLI is written, whatever ENGAGE_LOG_LEVEL (which is for the service's own lines):
// they are few, and they say why the service did not start or stopped.
const log = createJsonLog({ level: 'debug' });
const line = (level: LogLevel, message: string) => log.emit(level, message);

async function main(): Promise<void> {
  const read = readHttpSettings(process.env);
  if (!read.ok) {
    for (const problem of read.problems) line('error', problem);
    line('error', 'not started: fix the settings above');
    process.exit(2);
  }
  const { settings } = read;
  let redis: RedisClient | undefined;
  if (settings.redisUrl) {
    try {
      redis = await connectRedis(settings.redisUrl, (message) => line('warn', message));
    } catch (error) {
      line('error', `not started: Redis at ENGAGE_REDIS_URL is not reachable (${error instanceof Error ? error.message : String(error)})`);
      process.exit(2);
    }
  }
  if (settings.host !== '127.0.0.1' && settings.host !== 'localhost' && settings.host !== '::1' && settings.allowedHosts === undefined) {
    line('warn', `listening on ${settings.host} but ENGAGE_ALLOWED_HOSTS is not set: only requests whose Host is localhost are accepted. Set it to the public hostname(s) the proxy forwards.`);
  }

  let service: Service;
  try {
    service = await startService({
      env: process.env,
      catalogs: CATALOGS,
      host: settings.host,
      port: settings.port,
      allowedHosts: settings.allowedHosts,
      allowedOrigins: settings.allowedOrigins,
      maxBodyBytes: settings.maxBodyBytes,
      maxConcurrentPerKey: settings.maxConcurrentPerKey,
      requestTimeoutMs: settings.requestTimeoutMs,
      drainTimeoutMs: settings.drainTimeoutMs,
      drainDelayMs: settings.drainDelayMs,
      secret: settings.secret,
      logLevel: settings.logLevel,
      ...(redis ? { spent: new RedisSpentStore(redis), pace: (keyId: string) => new RedisPaceKeeper(redis as RedisClient, keyId) } : {}),
    });
  } catch (error) {
    line('error', `not started: ${error instanceof StartupError || error instanceof Error ? error.message : String(error)}`);
    await redis?.close().catch(() => undefined);
    process.exit(2);
  }
  if (!redis) {
    line('warn', 'ENGAGE_REDIS_URL is not set: spent confirmation tokens and the API pace are kept in this process. This service must not be replicated: run ONE replica only; to run several behind a load balancer, set ENGAGE_REDIS_URL and ENGAGE_STATE_SECRET on every replica.');
  }
  process.stdout.write(`${JSON.stringify({ url: service.url })}\n`);
  line('info', `listening on ${service.url}: /mcp (all tools) and /mcp/<domain>; /healthz, /readyz, /metrics`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    line('info', `${signal}: finishing the calls in flight`);
    void service
      .close()
      .then(() => redis?.close())
      .catch((error: unknown) => line('error', `while stopping: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => process.exit(0));
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));
  process.on('uncaughtException', (error) => line('error', `uncaught: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) => line('error', `unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
}

void main();
