// review35: a stdio server whose host quits (stdin closed) while a write is at the API waits up to
// 10 s for it. A write still there then was cut off by the exit, and its end was never noted where
// the owner looks: the process exited as soon as its pool was closed, before the write's failure
// (as of unknown outcome) reached the audit record, which had no line for it, and the log said
// only that the call "failed: cancelled". Now the server says in its log that a write is cut off
// at the stop, and exits once that write's unknown outcome is noted: its audit line is written.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
  stateDir = mkdtempSync(join(tmpdir(), 'engage-stop-cut-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

it('a write still at the API when the stop gives up on it is logged as cut off, and its unknown outcome reaches the audit record', async () => {
  const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: stateDir };
  const server = lineServer('channel', env);
  await server.open();
  // Longer than the 10 s a stopping server waits for its writes.
  sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 15_000 });
  void server.request('tools/call', { name: 'channel_action', arguments: { operationId: SEND, params: { msisdn: '081234567890', message: 'cut off' } } });
  await until('the send at the API', () => requestsAtApi(sandbox, SEND) === 1);
  server.child.stdin.end();
  const code = await new Promise((resolve) => server.child.once('exit', resolve));
  expect(code).toBe(0);
  const audit = join(stateDir, 'audit.jsonl');
  const lines = existsSync(audit)
    ? readFileSync(audit, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    : [];
  expect(
    lines.map(({ operationId, outcome }) => ({ operationId, outcome })),
    server.log(),
  ).toEqual([{ operationId: SEND, outcome: 'unknown' }]);
  expect(server.log()).toMatch(/a write is still at the API 10 s after the stop began: it is cut off now, and noted as of unknown outcome/);
}, 30_000);
