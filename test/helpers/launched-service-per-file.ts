// The built remote service (`packages/http/dist/cli.js`, as an operator starts it) on a sandbox of its
// own for one test file, started before its tests and killed after them, with its stderr kept.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Sandbox } from '../../packages/sandbox/src/index.js';
import { launchService, stopService } from '../service-process.js';
import { started } from './started.js';

/** `env` past ENGAGE_BASE_URL (the sandbox's). */
export function launchedServicePerFile(env: Record<string, string> = {}): { readonly sandbox: Sandbox; readonly url: string; readonly log: string[] } {
  let sandbox: Sandbox | undefined;
  let url: string | undefined;
  let log: string[] | undefined;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    const launched = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ...env });
    child = launched.child;
    log = launched.stderr;
    url = await launched.url;
  }, 30_000);
  afterAll(async () => {
    if (child) await stopService(child, 'SIGKILL');
    await sandbox?.close();
  });
  return {
    get sandbox() {
      return started(sandbox, 'sandbox');
    },
    get url() {
      return started(url, 'service');
    },
    get log() {
      return started(log, 'service');
    },
  };
}
