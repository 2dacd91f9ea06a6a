// The remote service attacked by raw TCP clients, one service a test: a sandbox for the file, the
// service each test starts with its own options (its log lines kept), and the sockets a test opens,
// destroyed after it with its service.
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

/** Registers the hooks; `ready` is told the sandbox. `serve` starts this test's service. */
export function rawClientsPerTest(ready: (sandbox: Sandbox) => void) {
  const sockets: Socket[] = [];
  const logs: string[] = [];
  let sandbox: Sandbox | undefined;
  let service: Service | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    ready(sandbox);
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await service?.close();
    service = undefined;
    logs.length = 0;
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  const serve = async (overrides: Partial<ServiceOptions> = {}): Promise<Service> => {
    service = await startService({
      env: { ENGAGE_BASE_URL: (sandbox as Sandbox).baseUrl },
      catalogs: CATALOGS,
      port: 0,
      writeLog: (line) => void logs.push(line),
      ...overrides,
    });
    return service;
  };
  return { sockets, logs, serve };
}

/** How many TCP connections the service holds open now. */
export function openConnections(service: Service): Promise<number> {
  return new Promise((resolve) => service.server.getConnections((_error, count) => resolve(count)));
}

/** One sandbox and one service for the whole file (quiet logs); the sockets opened are destroyed after it. */
export function rawClientsPerFile() {
  const sockets: Socket[] = [];
  const started: { sandbox?: Sandbox; service?: Service } = {};
  beforeAll(async () => {
    started.sandbox = await startSandbox();
    started.service = await startService({ env: { ENGAGE_BASE_URL: started.sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {} });
  });
  afterAll(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await started.service?.close();
    await started.sandbox?.close();
  });
  return {
    sockets,
    get sandbox(): Sandbox {
      return started.sandbox as Sandbox;
    },
    get service(): Service {
      return started.service as Service;
    },
  };
}
