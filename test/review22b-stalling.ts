// Review 22b: a sandbox, a real redis-server, and in-process channel servers whose guard store is on
// a real connection that can pause that redis-server (SIGSTOP) just as it sends a chosen script:
// the command times out, the connection is dropped and made again, and Redis applies what it held
// late, as a real stall does. What the stall tests of review 22b share.
import { afterAll, beforeAll, expect } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { connectRedis, type RedisClient } from '../packages/http/src/redis.js';
import { CLAIM_WRITE, RESERVE, RedisGuardStore, SETTLE, TAKE } from '../packages/http/src/redis-guard-store.js';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';

export const STATE_SECRET = new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes');
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A connection that gives up fast: a stall of 600 ms outlasts its commands, and it is made again within 200 ms. */
export const QUICK_CONNECTION = { commandTimeoutMs: 300, connectTimeoutMs: 300, minBackoffMs: 20, maxBackoffMs: 200 };

/** A real redis-server for the test file, and quick connections to it (closed after the file). */
export function redisPerFile(): { client(): Promise<RedisClient> } {
  let redis: RedisServer;
  const opened: RedisClient[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await Promise.allSettled(opened.map((each) => each.close()));
    await redis?.stop();
  });
  return {
    async client() {
      const made = await connectRedis(redis.url, () => {}, QUICK_CONNECTION);
      opened.push(made);
      return made;
    },
  };
}

export interface Stalling {
  /** The next EVALSHA of this script pauses Redis, for 600 ms (the command times out after 300). */
  stallOn(sha: string): void;
  /** The next EVALSHA of this script finds its connection just closed by Redis (CLIENT KILL, as a failover or a proxy does): it is lost. */
  dropOn(sha: string): void;
  /** Redis is running again after the last stall. */
  resumed: Promise<void>;
}

export interface StallBench {
  sandbox: Sandbox;
  /** A channel server (ENGAGE_CONFIRM=none unless `env` says) on its own stalling connection. */
  replica(env?: Record<string, string>): Promise<{ server: InProcess; stalling: Stalling; storeAnswers(): Promise<void> }>;
  sendsOf(message: string): number;
  /** The call again until the store answers (the connection is being made again); every answer until then says nothing was sent. */
  whenStoreAnswers(call: () => ReturnType<InProcess['call']>, message: string): ReturnType<InProcess['call']>;
  close(): Promise<void>;
}

export async function startStallBench(): Promise<StallBench> {
  const sandbox = await startSandbox();
  const redis: RedisServer = await startRedis();
  const opened: RedisClient[] = [];
  const servers: InProcess[] = [];
  const sendsOf = (message: string) =>
    sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.params.message === message).length;

  async function stallingClient(): Promise<{ client: RedisClient; stalling: Stalling }> {
    const real = await connectRedis(redis.url, () => {}, QUICK_CONNECTION);
    opened.push(real);
    // Loaded, as on a Redis that has served writes before: a script Redis held is then run, not refused NOSCRIPT.
    for (const each of [RESERVE, TAKE, CLAIM_WRITE, SETTLE]) await real.command(['SCRIPT', 'LOAD', each.source]);
    let target: string | undefined;
    let dropTarget: string | undefined;
    const own = await real.command(['CLIENT', 'ID']);
    const killer = await connectRedis(redis.url);
    opened.push(killer);
    const stalling: Stalling = { stallOn: (sha) => void (target = sha), dropOn: (sha) => void (dropTarget = sha), resumed: Promise.resolve() };
    const client: RedisClient = {
      async command(args) {
        if (dropTarget !== undefined && args[0] === 'EVALSHA' && args[1] === dropTarget) {
          dropTarget = undefined;
          await killer.command(['CLIENT', 'KILL', 'ID', own as number]);
        }
        if (target !== undefined && args[0] === 'EVALSHA' && args[1] === target) {
          target = undefined;
          const pid = redis.pid as number;
          process.kill(pid, 'SIGSTOP');
          stalling.resumed = sleep(600).then(() => void process.kill(pid, 'SIGCONT'));
        }
        return real.command(args);
      },
      close: () => real.close(),
    };
    return { client, stalling };
  }

  return {
    sandbox,
    sendsOf,
    async replica(env = {}) {
      const { client, stalling } = await stallingClient();
      const store = new RedisGuardStore(client, { stateSecret: STATE_SECRET });
      const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ...env }, server: { guardStore: () => store } });
      servers.push(server);
      const storeAnswers = async () => {
        while (
          !(await store.count('review22b-probe').then(
            () => true,
            () => false,
          ))
        )
          await sleep(20);
      };
      return { server, stalling, storeAnswers };
    },
    async whenStoreAnswers(call, message) {
      for (let tries = 0; ; tries++) {
        const result = await call();
        if (!(result.isError && textOf(result).includes("guardrails' shared store")) || tries > 100) return result;
        expect(sendsOf(message)).toBe(0);
        await sleep(50);
      }
    },
    async close() {
      await Promise.allSettled(servers.map((each) => each.close()));
      await Promise.allSettled(opened.map((each) => each.close()));
      await redis.stop();
      await sandbox.close();
    },
  };
}
