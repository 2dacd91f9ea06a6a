// Review 23c: a hostile network client against remote mode's HTTP server. Found: (1) Node's
// requestTimeout, which bounds only the receiving of a request, was set to the answer's deadline
// plus 5 s (12 min 5 s by default), so a POST whose body trickles or never ends held its
// connection, its buffered body and a place in its key's concurrency limit for 12 minutes (a
// made-up key each time: no limit at all); (2) a request Node could not take (Transfer-Encoding
// with Content-Length, headers over 16 KiB, a receiving bound passed) was answered with a reset
// and no status. Now receiving has its own bound (receiveTimeoutMs, 60 s by default) and those
// requests get Node's own 400, 431 or 408.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { WAIT_UNDER_LOAD } from './helpers.js';

let sandbox: Sandbox;
let service: Service;
const logs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: (line) => void logs.push(line),
    logLevel: 'debug',
    // The answer may take a minute; the receiving of a request half a second.
    requestTimeoutMs: 60_000,
    receiveTimeoutMs: 500,
    maxConcurrentPerKey: 1,
  });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

/** A raw connection: `write` sends what it likes; resolves with all that came back once the server closes it. */
function exchange(write: (socket: Socket) => void): Promise<string> {
  const port = Number(new URL(service.url).port);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => write(socket));
    let answer = '';
    socket.on('data', (chunk) => void (answer += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
  });
}

const head = (key: string, extra: string) =>
  `POST /mcp/billing HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n${extra}\r\n`;
const quota = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'billing_get', arguments: { operationId: 'billing.quota' } } });

/** A 2026-07-28 billing.quota call over fetch; its status and body. */
async function callQuota(key: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${service.url}/mcp/billing`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'billing_get',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'billing_get',
        arguments: { operationId: 'billing.quota' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  return { status: response.status, text: await response.text() };
}

describe('receiving a request has its own bound', () => {
  it('a body that never ends is answered 408 and its key’s place is given back; other tenants are served meanwhile', async () => {
    const key = sandbox.keys.full;
    // Chunked, one piece of the JSON, and never the last chunk.
    const held = exchange((socket) => socket.write(`${head(key, 'Transfer-Encoding: chunked\r\n')}5\r\n{"jso\r\n`));
    const other = await callQuota(sandbox.keys.otherTenant);
    expect(other.status, other.text).toBe(200);
    expect(other.text).toMatch(/messageQuota/);
    expect((await held).split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    // The key's one place (maxConcurrentPerKey 1) is free again (once the server has seen the connection close too).
    await expect.poll(async () => (await callQuota(key)).status, WAIT_UNDER_LOAD).toBe(200);
  });

  it('a body sent whole but slowly past the bound is 408 too, however small', async () => {
    const answer = await exchange((socket) => {
      socket.write(head(sandbox.keys.full, `Content-Length: ${quota.length}\r\n`));
      let at = 0;
      const drip = setInterval(() => {
        if (socket.destroyed || at >= quota.length) return clearInterval(drip);
        socket.write(quota[at++] as string);
      }, 100);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('headers that never end are 408', async () => {
    const answer = await exchange((socket) => socket.write('POST /mcp/billing HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a'));
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('an answer that takes longer than the receiving bound is not cut', async () => {
    sandbox.injectFault({ kind: 'delay', delayMs: 1500, operationId: 'billing.quota' });
    const slow = await callQuota(sandbox.keys.full);
    expect(slow.status, slow.text).toBe(200);
    expect(slow.text).toMatch(/messageQuota/);
  });
});

describe('requests Node cannot take get a status, not a reset', () => {
  it('Transfer-Encoding with Content-Length (request smuggling) is 400', async () => {
    const answer = await exchange((socket) => socket.write(`${head(sandbox.keys.full, 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\n`));
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
  });

  it('3,000 headers are 431', async () => {
    const many = Array.from({ length: 3000 }, (_, index) => `X-H${index}: v\r\n`).join('');
    const answer = await exchange((socket) => socket.write(`${head(sandbox.keys.full, `${many}Content-Length: ${quota.length}\r\n`)}${quota}`));
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
  });

  it('the service serves on after them, and logged no error', async () => {
    const after = await callQuota(sandbox.keys.full);
    expect(after.status, after.text).toBe(200);
    expect(logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });
});
