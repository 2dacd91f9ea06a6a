// Where the transport matters: the built server as a raw child process. stdout carries only
// JSON-RPC, malformed input never kills it, and it exits promptly when the host goes away.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEntry, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { WAIT_UNDER_LOAD } from './helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

interface Raw {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  stderr: () => string;
  send(message: unknown): void;
  response(id: number): Promise<Record<string, any>>;
  exited: Promise<number | null>;
}

function start(domain: Parameters<typeof serverEntry>[0], env: Record<string, string> = {}): Raw {
  const child = spawn(process.execPath, [serverEntry(domain)], {
    env: { PATH: process.env.PATH ?? '', ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_API_KEY: sandbox.keys.full, ENGAGE_LOG_LEVEL: 'debug', ...env },
  });
  const lines: string[] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts.filter((line) => line !== ''));
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    send: (message) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    response: async (id) => {
      await expect.poll(() => lines.some((line) => JSON.parse(line).id === id), { timeout: 15_000 }).toBe(true);
      return JSON.parse(lines.find((line) => JSON.parse(line).id === id) as string);
    },
    exited,
  };
}

const initialize = (raw: Raw) => {
  raw.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
  raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
};

describe('a server process', () => {
  it('survives malformed protocol input and answers everything it can, with only JSON-RPC on stdout', async () => {
    const raw = start('contact');
    initialize(raw);
    raw.send('this is not json');
    raw.send('{"jsonrpc":"2.0","id":');
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } });
    raw.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'contact_read', arguments: 'not an object' } });
    raw.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'contact_read', arguments: { operationId: 42, params: [] } } });
    raw.send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'contact_action', arguments: { operationId: 'contact.import', params: { users: 'x'.repeat(5_000_000) } } },
    });
    // Over the SDK reader's 10 MiB: dropped unread, and the server goes on.
    raw.send({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'contact_action', arguments: { operationId: 'contact.import', params: { users: 'x'.repeat(11_000_000) } } },
    });
    raw.send({ jsonrpc: '2.0', id: 6, method: 'no/such/method' });
    raw.send({ jsonrpc: '2.0', id: 7, method: 'tools/list' });

    expect((await raw.response(2)).error.code).toBe(-32602); // an unknown tool is a protocol error
    expect((await raw.response(3)).error.code).toBe(-32602);
    expect((await raw.response(4)).result.isError).toBe(true);
    expect((await raw.response(5)).result.content[0].text).toMatch(/larger than 4 MiB; nothing was sent/);
    expect((await raw.response(6)).error.code).toBe(-32601);
    expect((await raw.response(7)).result.tools).toHaveLength(2);
    expect(raw.lines.some((line) => JSON.parse(line).id === 8)).toBe(false);
    expect(raw.stderr()).toMatch(/dropped unread/);
    for (const line of raw.lines) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    expect(raw.stderr()).not.toContain(sandbox.keys.full);
    expect(sandbox.requests()).toHaveLength(0);
    raw.child.stdin.end();
    expect(await raw.exited).toBe(0);
  });

  it('reports a configuration problem on stderr and in every answer, without crashing', async () => {
    const raw = start('campaign', { ENGAGE_BASE_URL: 'http://api.example.com', ENGAGE_TIMEOUT_MS: 'soon' });
    initialize(raw);
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'campaign_read', arguments: { operationId: 'campaign.list' } } });
    const answer = await raw.response(2);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0].text).toMatch(/not configured.*must use https.*ENGAGE_TIMEOUT_MS must be a whole number/);
    expect(raw.stderr()).toMatch(/not configured/);
    raw.child.stdin.end();
    expect(await raw.exited).toBe(0);
  });

  it.each([
    ['its stdin closes', (raw: Raw) => raw.child.stdin.end()],
    ['it gets SIGTERM', (raw: Raw) => raw.child.kill('SIGTERM')],
  ])('exits when %s, also while it waits on a rate limit', async (_, stop) => {
    const raw = start('contact', { ENGAGE_MAX_RETRY_WAIT_S: '600' });
    initialize(raw);
    await raw.response(1);
    sandbox.clearLogs();
    sandbox.injectFault({ kind: 'rate-limit', operationId: 'contact.list', retryAfter: '300' });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'contact_read', arguments: { operationId: 'contact.list' } } });
    await expect.poll(() => sandbox.requests().length, WAIT_UNDER_LOAD).toBe(1);
    stop(raw);
    expect(await raw.exited).toBe(0);
    expect(raw.child.exitCode ?? raw.child.signalCode).not.toBeNull();
  });
});
