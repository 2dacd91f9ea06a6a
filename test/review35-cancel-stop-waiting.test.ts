// review35: a stdio server told to stop (SIGTERM, SIGINT; its stdin still open) takes no new write
// and sends none it had taken but not yet sent (review31), yet a write waiting out a 429's
// Retry-After was sent once the wait ended, after the signal: carried out while the server was
// stopping, and cut off at the API by the exit 10 s after the signal when the wait and the API
// together took longer, its outcome never noted. Now the wait ends at the signal and nothing is
// sent: the model is told so, the server exits without waiting it out, and a server started
// after it on the same state folder sends the write as new (nothing of it went out).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, requestsAtApi, until } from './helpers.js';
import { lineServer } from './helpers/line-server.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let stateDir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  stateDir = mkdtempSync(join(tmpdir(), 'engage-stop-waiting-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

function server() {
  const env = {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys.full,
    ENGAGE_CONFIRM: 'none',
    ENGAGE_LOG_LEVEL: 'info',
    ENGAGE_STATE_DIR: stateDir,
  };
  return lineServer('channel', env);
}

it.each(['SIGTERM', 'SIGINT'] as const)(
  '%s while a write waits out a 429: it is not sent, the model is told, and the next server sends it',
  async (signal) => {
    const arguments_ = { operationId: SEND, params: { msisdn: '081234567890', message: `waiting as the server stops (${signal})` } };
    const first = server();
    await first.open();
    const before = requestsAtApi(sandbox, SEND);
    const carriedBefore = countCarriedOut(sandbox, SEND);
    // Within the 10 s a stopping server waits for its writes: the wait would end, and the write be sent, after the signal.
    sandbox.injectFault({ kind: 'rate-limit', operationId: SEND, retryAfter: '5' });
    const sending = first.request('tools/call', { name: 'channel_action', arguments: arguments_ });
    await until('the 429 answered', () => requestsAtApi(sandbox, SEND) > before);
    first.child.kill(signal);
    const closed = new Promise<number | null>((resolve) => first.child.once('close', resolve));
    // Its stdout ends when it exits: an answer not written by then never comes.
    const answer = await Promise.race([sending, closed.then(() => undefined)]);
    expect(answer, 'the server exited without answering the call').toBeDefined();
    expect(await closed).toBe(0);
    expect(requestsAtApi(sandbox, SEND) - before, JSON.stringify(answer?.result)).toBe(1);
    expect(countCarriedOut(sandbox, SEND) - carriedBefore).toBe(0);
    expect(answer?.result.isError).toBe(true);
    expect(answer?.result.structuredContent).toMatchObject({ operationId: SEND, outcome: 'refused' });
    expect(answer?.result.content[0].text).toMatch(/began stopping .* it was not sent and nothing was carried out/);

    // Nothing went out: the next server on the same state folder sends it as new, with no word of an earlier send.
    const second = server();
    await second.open();
    const again = await second.request('tools/call', { name: 'channel_action', arguments: arguments_ });
    second.child.stdin.end();
    await second.exited;
    expect(again.result.structuredContent.outcome, again.result.content[0].text).toBe('done');
    expect(again.result.content[0].text).not.toMatch(/also sent|unknown/);
    expect(countCarriedOut(sandbox, SEND) - carriedBefore).toBe(1);
  },
  40_000,
);
