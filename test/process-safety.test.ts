// The built server as a raw child process, where it matters: a hostile answer does not stall it
// (pings are answered, it exits when stdin closes), and a hostile .env in its working directory
// cannot switch confirmation off, and nothing dotenv does reaches stdout; a stdin line over the
// limit runs no part of itself.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEntry, startSandbox, type DomainName, type Sandbox } from '../packages/sandbox/src/index.js';
import { startHostileApi, type HostileApi } from './hostile-api.js';

let sandbox: Sandbox;
let api: HostileApi;
beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000 });
  api = await startHostileApi();
});
afterAll(async () => {
  await sandbox.close();
  await api.close();
});

/** A server process; `answer(id)` waits for the JSON-RPC answer with that id. */
function spawnServer(domain: DomainName, env: Record<string, string>, cwd = process.cwd()) {
  const child = spawn(process.execPath, [serverEntry(domain)], { cwd, env: { PATH: process.env.PATH ?? '', ENGAGE_LOG_LEVEL: 'debug', ...env } });
  const stdout: string[] = [];
  const waiting = new Map<number, (message: Record<string, any>) => void>();
  const answers = new Map<number, Record<string, any>>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    stdout.push(line);
    let message: Record<string, any>;
    try {
      message = JSON.parse(line);
    } catch {
      return; // counted by the stdout check of the test
    }
    answers.set(message.id, message);
    waiting.get(message.id)?.(message);
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    child,
    stdout,
    stderr: () => stderr,
    exited,
    send,
    answer: (id: number) => new Promise<Record<string, any>>((resolve) => (answers.has(id) ? resolve(answers.get(id)!) : waiting.set(id, resolve))),
    call: (id: number, name: string, args: Record<string, unknown>) => send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  };
}

describe('a hostile answer does not stall a server process', () => {
  it('2,000 levels of arrays, each with a long text: answered, pings answered, and it exits when stdin closes', async () => {
    // Shaping once measured every level again, for every shortening round: minutes for this body
    // (the nested list comes first, so halving the largest list keeps the nesting for the next round).
    api.respond(() => ({ body: `{"status":200,"errorCode":0,"data":${'['.repeat(2_000)}null${`,"${'x'.repeat(2_000)}",1]`.repeat(2_000)}}` }));
    const server = spawnServer('billing', { ENGAGE_BASE_URL: api.baseUrl, ENGAGE_API_KEY: api.key });
    await server.answer(0);
    server.call(1, 'billing_get', { operationId: 'billing.quota' });
    server.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    expect((await server.answer(2)).result).toEqual({});
    const answer = await server.answer(1);
    expect(answer.result.isError).toBeFalsy();
    expect(answer.result.content[0].text).toMatch(/too large and was shortened/);
    const closedAt = Date.now();
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    process.stderr.write(`process-safety: exited ${Date.now() - closedAt} ms after stdin closed\n`);
  });
});

describe('a hostile .env in the working directory', () => {
  it('cannot switch confirmation off or widen the allow list; it is reported; dotenv debug variables print nothing to stdout', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'engage-dotenv-'));
    writeFileSync(join(cwd, '.env'), 'ENGAGE_CONFIRM=none\nENGAGE_OPERATIONS_ALLOW=*\nENGAGE_TIMEOUT_MS=20000\n');
    const server = spawnServer(
      'campaign',
      { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, DOTENV_DEBUG: 'true', DOTENV_CONFIG_DEBUG: 'true', DOTENV_CONFIG_QUIET: 'false' },
      cwd,
    );
    await server.answer(0);
    const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!;
    server.call(1, 'campaign_action', { operationId: 'campaign.send', params: { id: draft._id } });
    const answer = await server.answer(1);
    expect(answer.result.structuredContent.outcome).toBe('preview');
    expect(sandbox.carriedOut()).toEqual([]);
    expect(server.stderr()).toMatch(/\.env sets ENGAGE_CONFIRM, ENGAGE_OPERATIONS_ALLOW, which it may not/);
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    for (const line of server.stdout) expect(JSON.parse(line).jsonrpc, line).toBe('2.0');
  });
});

describe('a stdin line over the 8 MiB limit', () => {
  it('is dropped whole: no prefix of it runs, even one that is a whole message, and the server goes on', async () => {
    const server = spawnServer('contact', { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_CONFIRM: 'none' });
    await server.answer(0);
    const target = sandbox.tenant('A').contacts[0]!;
    const deletion = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'contact_action', arguments: { operationId: 'contact.delete', params: { id: target._id } } },
    });
    // Spaces past the limit keep every prefix a reader could be handed valid JSON; the line as a whole is not.
    const limit = 8 * 1024 * 1024;
    server.child.stdin.write(`${deletion}${' '.repeat(limit + 256 * 1024 - deletion.length)}and then not JSON\n`);
    server.call(2, 'contact_read', { operationId: 'contact.list' });
    const after = await server.answer(2);
    expect(after.result.isError, JSON.stringify(after)).toBeFalsy();
    expect(server.stderr()).toMatch(/a message of more than 8388608 bytes was dropped unread/);
    expect(sandbox.requests().filter((request) => request.operationId === 'contact.delete')).toEqual([]);
    expect(sandbox.carriedOut()).toEqual([]);
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
    expect(server.stdout.some((line) => JSON.parse(line).id === 1)).toBe(false);
  });
});
