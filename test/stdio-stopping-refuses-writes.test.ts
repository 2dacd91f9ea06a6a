// A stdio server told to stop (SIGTERM, SIGINT or SIGHUP) waits up to 10 s for the writes it has
// at the API, then exits. Its stdin stays open meanwhile, and a write asked for in that time was
// started too: the exit could cut it off at the API, its outcome never noted in the journal, the
// idempotency record or the audit record. Now a stopping server takes no new write: it answers
// that nothing was sent and to ask again once the host has started it again. Reads still answer.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, until } from './helpers.js';
import { lineServer } from './helpers/line-server.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let stateDir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  stateDir = mkdtempSync(join(tmpdir(), 'engage-stopping-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** The built channel server over stdio, spoken to line by line (this test is about the process and its signals). */
function channelServer() {
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: stateDir };
  return lineServer('channel', env);
}

it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
  'after %s, while a write is at the API: a new write is refused and not sent; a read answers',
  async (signal) => {
    const server = channelServer();
    await server.open();
    sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 2_000 });
    const before = requestsAtApi(sandbox, SEND);
    const send = (message: string) =>
      server.request('tools/call', { name: 'channel_action', arguments: { operationId: SEND, params: { msisdn: '081234567890', message } } });
    const first = send(`first, before ${signal}`);
    await until('the first write at the API', () => requestsAtApi(sandbox, SEND) > before);
    server.child.kill(signal);
    const read = await server.request('tools/call', { name: 'channel_read', arguments: { operationId: 'channel.list' } });
    const second = await send(`second, after ${signal}`);
    expect((await first).result.isError, JSON.stringify((await first).result.content)).toBeFalsy();
    await server.exited;
    expect(requestsAtApi(sandbox, SEND) - before, JSON.stringify(second.result.content)).toBe(1);
    expect(second.result.isError).toBe(true);
    expect(second.result.content[0].text).toMatch(/stopping.*nothing was sent/i);
    expect(read.result.isError, JSON.stringify(read.result.content)).toBeFalsy();
  },
  30_000,
);
