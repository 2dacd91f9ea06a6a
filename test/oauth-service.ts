// A sandbox and the remote service with OAuth on (an in-memory OAuth store), started once per test
// file: what the OAuth answer tests share.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

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
