// A built channel server over stdio on a given state directory, as a host launches it, and its send
// called as a model calls it: for the tests of the stdio servers' shared state directory.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { launchServer, type LaunchedServer, type Sandbox } from '../../packages/sandbox/src/index.js';
import { toolOf } from '../helpers.js';

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
