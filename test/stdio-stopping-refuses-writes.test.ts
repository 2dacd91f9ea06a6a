// A stdio server told to stop (SIGTERM, SIGINT or SIGHUP) waits up to 10 s for the writes it has
// at the API, then exits. Its stdin stays open meanwhile, and a write asked for in that time was
// started too: the exit could cut it off at the API, its outcome never noted in the journal, the
// idempotency record or the audit record. Now a stopping server takes no new write: it answers
// that nothing was sent and to ask again once the host has started it again. Reads still answer.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, until } from './helpers.js';

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
  const env = {
    PATH: process.env.PATH ?? '',
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys.full,
    ENGAGE_CONFIRM: 'none',
    ENGAGE_STATE_DIR: stateDir,
  };
  const child = spawn(process.execPath, ['packages/channel/dist/index.js'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const answers = new Map<number, (message: Record<string, any>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line) as Record<string, any>;
    answers.get(message.id)?.(message);
  });
  let id = 0;
  const request = (method: string, params: unknown) =>
    new Promise<Record<string, any>>((resolve) => {
      answers.set(++id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, request, exited };
}

it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
  'after %s, while a write is at the API: a new write is refused and not sent; a read answers',
  async (signal) => {
    const server = channelServer();
    await server.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stopping', version: '0' } });
    server.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
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
