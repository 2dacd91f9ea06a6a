// A sandbox and the remote service with OAuth on (an in-memory OAuth store), started once per test
// file: what the OAuth answer tests share.
import { randomBytes } from 'node:crypto';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, type TestClient } from './helpers.js';

/** Registers the file's beforeAll/afterAll; `ready` gets the sandbox and service once they are up. */
export function oauthServicePerFile(env: Record<string, string>, ready: (started: { sandbox: Sandbox; service: Service }) => void): void {
  let sandbox: Sandbox | undefined;
  let service: Service | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    service = await startService({
      env: { ENGAGE_BASE_URL: sandbox.baseUrl, ...env },
      catalogs: CATALOGS,
      port: 0,
      writeLog: () => undefined,
      oauth: { kek: randomBytes(32), store: new MemoryOAuthStore() },
    });
    ready({ sandbox, service });
  });
  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
  });
}

/**
 * A v1 (2025) or pinned v2 (2026-07-28) client connected to `path` of the service with these
 * headers; the transports read the object at each request, so a test may change them between requests.
 */
export async function connectedOver(service: Service, kind: 'v1' | 'v2-modern', path: string, headers: Record<string, string>): Promise<TestClient> {
  const client = makeClient({ kind });
  const url = new URL(path, service.url);
  const requestInit = { headers };
  await client.connect(kind === 'v1' ? new LegacyHttpTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit }));
  return client;
}
