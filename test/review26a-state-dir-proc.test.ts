// The state directory named where mkdir answers ENOENT below a folder that exists
// (ENGAGE_STATE_DIR under /proc; HOME or XDG_STATE_HOME there name one too): Node's recursive
// mkdir retried that for ever, synchronously, at the first write, so the whole server stopped
// answering (that call and every later one). Now the write is refused, nothing is sent, and the
// server goes on answering. Through the built server over stdio, against the sandbox (after
// `npm run build`).
import { existsSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchServer, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { expectToolsAndARead, PATH_WITH_NODE } from './published-helpers.js';

const onProc = process.platform === 'linux' && existsSync('/proc/1');

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe.skipIf(!onProc)('a state directory under /proc', () => {
  it('a write is refused unsent and the server keeps answering', async () => {
    const { client, close } = await launchServer('contact', {
      PATH: PATH_WITH_NODE,
      ENGAGE_STATE_DIR: '/proc/1/engage-state',
      ENGAGE_CONFIRM: 'none',
      ENGAGE_BASE_URL: sandbox.baseUrl,
      ENGAGE_API_KEY: sandbox.keys.full,
    });
    try {
      const result = (await client.callTool({
        name: 'contact_action',
        arguments: { operationId: 'contact.create', params: { msisdn: '+6281234567890', name: 'Proc' } },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ operationId: 'contact.create', outcome: 'refused' });
      expect(JSON.stringify(result.content)).toContain('was not sent');
      expect(sandbox.requests().filter((request) => request.operationId === 'contact.create')).toEqual([]);
      await expectToolsAndARead(client, 'contact');
    } finally {
      await close();
    }
  }, 30_000);
});
