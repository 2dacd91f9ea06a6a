// A built channel server over stdio on a given state directory, as a host launches it, and its send
// called as a model calls it: for the tests of the stdio servers' shared state directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { launchServer, type LaunchedServer, type Sandbox, startSandbox } from '../../packages/sandbox/src/index.js';
import { requestsAtApi, toolOf, until } from '../helpers.js';

export const SEND = 'channel.whatsapp.send';

export function launchChannel(sandbox: Sandbox, dir: string, confirm = 'none', env: Record<string, string> = {}): Promise<LaunchedServer> {
  return launchServer('channel', {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys.full,
    ENGAGE_STATE_DIR: dir,
    ENGAGE_CONFIRM: confirm,
    ...env,
  });
}

/** `timeout`: how long the answer is waited for (a server that hangs fails the call, not the whole test file). */
export function callSend(server: LaunchedServer, args: Record<string, unknown>, timeout = 60_000): Promise<CallToolResult> {
  return server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, ...args } }, undefined, { timeout }) as Promise<CallToolResult>;
}

export interface ChannelsOnStateFolders {
  readonly sandbox: Sandbox;
  /** A new state folder of this file's. */
  stateDir(): string;
  /** A channel server on `dir`, closed after the test. */
  launched(dir: string): Promise<LaunchedServer>;
  /** The host quits (closes the server's stdin) while the send is at the API; resolves once the server has exited. */
  quitMidSend(dir: string, args: Record<string, unknown>): Promise<void>;
}

/** A sandbox and state folders for one test file, its channel servers closed after each test: for the tests of writes whose host quit. */
export function channelsOnStateFoldersPerFile(prefix: string): ChannelsOnStateFolders {
  let sandbox: Sandbox | undefined;
  const root = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const servers: LaunchedServer[] = [];
  let dirs = 0;
  beforeAll(async () => {
    sandbox = await startSandbox();
  }, 30_000);
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });
  const started = () => {
    if (!sandbox) throw new Error('the sandbox starts in beforeAll');
    return sandbox;
  };
  return {
    get sandbox() {
      return started();
    },
    stateDir: () => join(root, `state-${++dirs}`),
    async launched(dir) {
      const server = await launchChannel(started(), dir);
      servers.push(server);
      return server;
    },
    async quitMidSend(dir, args) {
      const on = started();
      const first = await launchChannel(on, dir);
      const before = requestsAtApi(on, SEND);
      on.injectFault({ kind: 'delay', operationId: SEND, delayMs: 600 });
      const pending = callSend(first, args).catch(() => undefined);
      await until('the send at the API', () => requestsAtApi(on, SEND) > before);
      await first.close();
      await pending;
    },
  };
}
