// A sandbox and one domain's server in process (the in-memory client and server pair) for one test
// file, started before its tests and closed after them: what the tests of what the model reads share.
import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Sandbox } from '../../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, type InProcess } from '../helpers.js';
import { started } from './started.js';

export function inProcessPerFile(domain: keyof typeof DOMAINS): { readonly sandbox: Sandbox; readonly server: InProcess } {
  let sandbox: Sandbox | undefined;
  let server: InProcess | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    server = await inProcess(DOMAINS[domain]!, sandbox);
  });
  afterAll(async () => {
    await server?.close();
    await sandbox?.close();
  });
  return {
    get sandbox() {
      return started(sandbox, 'sandbox');
    },
    get server() {
      return started(server, 'server');
    },
  };
}
