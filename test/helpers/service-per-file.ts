// An in-process remote service on a sandbox of its own for one test file, started before its tests
// and stopped after them, with the clients its tests opened: what the tests of remote mode's limits
// (sessions, confirmations, key locks, OAuth stores, keys not yet accepted) share.
import { afterAll, beforeAll } from 'vitest';
import { CATALOGS } from '../../packages/http/src/catalogs.js';
import { startService, type Service, type ServiceOptions } from '../../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../../packages/sandbox/src/index.js';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { modernClient } from '../service-process.js';
import { started } from './started.js';

export interface ServiceFile {
  readonly sandbox: Sandbox;
  readonly service: Service;
  /** A 2026-07-28 client of `/mcp/<domain>` with this key, closed after the file. */
  client(key: string, domain?: string): Promise<ModernClient>;
  /** Anything else to close after the file (a 2025 client). */
  closeAfter(closable: { close(): Promise<unknown> }): void;
}

/** `options` as startService takes them, past the sandbox's address, the catalogs, a free port and a quiet log. */
export function servicePerFile(options: Partial<ServiceOptions> = {}): ServiceFile {
  let sandbox: Sandbox | undefined;
  let service: Service | undefined;
  const closables: Array<{ close(): Promise<unknown> }> = [];
  beforeAll(async () => {
    sandbox = await startSandbox();
    service = await startService({
      env: { ENGAGE_BASE_URL: sandbox.baseUrl },
      catalogs: CATALOGS,
      port: 0,
      writeLog: () => undefined,
      ...options,
    } as ServiceOptions);
  });
  afterAll(async () => {
    await Promise.allSettled(closables.map((closable) => closable.close()));
    await service?.close();
    await sandbox?.close();
  });
  return {
    get sandbox() {
      return started(sandbox, 'sandbox');
    },
    get service() {
      return started(service, 'service');
    },
    async client(key, domain = 'channel') {
      const made = await modernClient(started(service, 'service').url, key, { domain });
      closables.push(made);
      return made;
    },
    closeAfter(closable) {
      closables.push(closable);
    },
  };
}
