// Helpers of the review-3 OAuth tests: a service on the sandbox with OAuth on, stores that watch
// or slow their calls, and a client metadata document served over https from loopback.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';
import { makeCertificates } from './redis-server.js';

export function serveOAuth(
  sandbox: Sandbox,
  logs: string[],
  oauth: Partial<NonNullable<ServiceOptions['oauth']>> = {},
  options: Partial<ServiceOptions> = {},
): Promise<Service> {
  return startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: (line) => void logs.push(line),
    logLevel: 'debug',
    oauth: { kek: randomBytes(32), store: new MemoryOAuthStore(), ...oauth },
    ...options,
  });
}

/** A memory store that notes every write (put, claimOnce, count, addMember) by key. */
export class WatchedStore extends MemoryOAuthStore {
  writes: string[] = [];
  override async put(key: string, value: unknown, ttlMs: number): Promise<void> {
    this.writes.push(key);
    return super.put(key, value, ttlMs);
  }
  override async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    this.writes.push(key);
    return super.claimOnce(key, ttlMs);
  }
  override async count(key: string, ttlMs: number): Promise<number> {
    this.writes.push(key);
    return super.count(key, ttlMs);
  }
  override async addMember(set: string, member: string, ttlMs: number): Promise<void> {
    this.writes.push(set);
    return super.addMember(set, member, ttlMs);
  }
}

/** A memory store whose next read of one key answers late: what was read is handed back after `ms`, as over a slow network. */
export class SlowReadStore extends MemoryOAuthStore {
  slow: { key: string; ms: number } | undefined;
  keys(): string[] {
    return [...(this as unknown as { records: Map<string, unknown> }).records.keys()];
  }
  override async get<T>(key: string): Promise<T | undefined> {
    const value = await super.get<T>(key);
    const slow = this.slow;
    if (slow && slow.key === key) {
      this.slow = undefined;
      await new Promise((resolve) => setTimeout(resolve, slow.ms));
    }
    return value;
  }
}

/** An https server on loopback with a certificate of a test CA; `answer` gets the URL the server is at. */
export async function startMetadataHost(
  answer: (url: string, req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: HttpsServer; url: string; ca: Buffer; close(): Promise<void> }> {
  const files = makeCertificates(mkdtempSync(join(tmpdir(), 'engage-r3-cimd-')), 'r3cimd');
  let url = '';
  const server = createHttpsServer({ cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) }, (req, res) => answer(url, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://localhost:${(server.address() as AddressInfo).port}/client.json`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { server, url, ca: readFileSync(files.caFile), close };
}
