// review8 (stdio side of the drain finding): a host that closes stdin while a write is at the API.
// The server waits for the write (up to 10 s) before it exits, so its outcome is noted: the same
// call with the same idempotencyKey, made to the next server on that state folder, is told it was
// carried out (not "the outcome is unknown"), and the API got one send.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { lineServer } from './helpers/line-server.js';

let sandbox: Sandbox;
let stateDir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  stateDir = mkdtempSync(join(tmpdir(), 'engage-stop-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const sends = () => sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send');

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The built channel server over stdio, spoken to line by line (this test is about the process, not a client). */
function channelServer() {
  return lineServer('channel', {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys.full,
    ENGAGE_CONFIRM: 'none',
    ENGAGE_STATE_DIR: stateDir,
  });
}

describe('review8: stdin closed while a write is at the API', () => {
  it('the server waits for the write, so the next server knows its idempotency key was carried out', async () => {
    const args = { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message: 'Pesanan 4712 dikirim' }, idempotencyKey: 'order-4712' };
    sandbox.injectFault({ kind: 'delay', operationId: 'channel.whatsapp.send', delayMs: 1_500 });
    const first = channelServer();
    await first.open();
    void first.request('tools/call', { name: 'channel_action', arguments: args });
    await until(() => sandbox.requests().some((seen) => seen.operationId === 'channel.whatsapp.send'));
    first.child.stdin.end(); // the host goes away
    await first.exited;
    expect(sends()).toHaveLength(1); // the server did not exit before the API answered

    const second = channelServer();
    await second.open();
    const repeat = await second.request('tools/call', { name: 'channel_action', arguments: args });
    second.child.stdin.end();
    await second.exited;
    expect(sends()).toHaveLength(1);
    expect(repeat.result.structuredContent.outcome, JSON.stringify(repeat.result.content)).toBe('done');
  }, 30_000);
});
