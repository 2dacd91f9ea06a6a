// A fresh sandbox for every test, and in-process servers against it that are closed after it.
import { afterEach, beforeEach } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../packages/sandbox/src/index.js';
import { domainOf, inProcess, type InProcess, type InProcessOptions } from './helpers.js';

/** Registers the hooks; `started` is told each new sandbox. Returns serve(operationId), for the server of that operation's domain. */
export function sandboxPerTest(started: (sandbox: Sandbox) => void, options: SandboxOptions = { sendStepMs: 60_000 }) {
  let sandbox: Sandbox;
  const open: InProcess[] = [];
  beforeEach(async () => {
    sandbox = await startSandbox(options);
    started(sandbox);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
    await sandbox.close();
  });
  return async (operationId: string, serverOptions: InProcessOptions = {}) => {
    const server = await inProcess(domainOf(operationId), sandbox, serverOptions);
    open.push(server);
    return server;
  };
}
