// Review 24a: a 2025-era answer streamed as SSE said `Connection: keep-alive` to a client that had
// sent `Connection: close`, and the service then held the socket open until keepAliveTimeout
// closed it. The SDK's web-standard transport puts `Connection: keep-alive` in its SSE Response and
// the SDK's toNodeHandler copies every header to Node, which then neither says close nor closes.
// Connection is a hop-by-hop header and Node's to decide (HTTP/1.1 is persistent unless asked
// otherwise): the service now drops a Connection: keep-alive the SDK set, so Node honours the
// client's close, and still keeps a connection alive for a client that did not ask to close it.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';

let sandbox: Sandbox;
let service: Service;
beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {} });
});
afterAll(async () => {
  await service?.close();
  await sandbox?.close();
});

interface Answer {
  head: string;
  sessionId: string | undefined;
  /** The server ended the connection after the whole answer (read only for a request that asked to close). */
  endedAfterAnswer: boolean;
}

/** Writes one raw POST on `socket` and reads its chunked answer to the end; with Connection: close, also waits for the server to end the socket. */
function post(socket: Socket, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const text = JSON.stringify(body);
  const lines = Object.entries({
    host: 'localhost',
    authorization: `Bearer ${sandbox.keys.full}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  }).map(([name, value]) => `${name}: ${value}`);
  socket.write(`POST /mcp/billing HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${text}`);
  return new Promise((resolve, reject) => {
    let got = '';
    let whole: Answer | undefined;
    const onData = (chunk: Buffer) => {
      got += chunk.toString();
      if (!whole && got.includes('\r\n\r\n') && got.endsWith('0\r\n\r\n')) {
        const head = got.slice(0, got.indexOf('\r\n\r\n')).toLowerCase();
        whole = { head, sessionId: /mcp-session-id: (\S+)/.exec(head)?.[1], endedAfterAnswer: false };
        if (headers.connection !== 'close') {
          socket.off('data', onData);
          resolve(whole);
        }
      }
    };
    socket.on('data', onData);
    socket.once('end', () => {
      socket.off('data', onData);
      if (whole) resolve({ ...whole, endedAfterAnswer: true });
      else reject(new Error(`ended before a whole answer: ${got}`));
    });
    socket.once('error', reject);
  });
}

const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'review24a', version: '1' } },
});

function opened(): Promise<Socket> {
  const { port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('a 2025 SSE answer and the client’s Connection: close', () => {
  it('initialize with Connection: close: the answer says close, and the server ends the connection after it', async () => {
    const socket = await opened();
    try {
      const answer = await post(socket, initialize(1), { connection: 'close' });
      expect(answer.head).toContain('content-type: text/event-stream');
      expect(answer.head).toMatch(/\r\nconnection: close(\r\n|$)/);
      expect(answer.head).not.toContain('keep-alive');
      expect(answer.endedAfterAnswer).toBe(true);
    } finally {
      socket.destroy();
    }
  });

  it('a tools/call in a session, with Connection: close: the same', async () => {
    const first = await opened();
    let sessionId: string | undefined;
    try {
      sessionId = (await post(first, initialize(1), {})).sessionId;
    } finally {
      first.destroy();
    }
    expect(sessionId).toBeTruthy();
    const session = { 'mcp-session-id': sessionId as string, 'mcp-protocol-version': '2025-06-18' };
    const calling = await opened();
    try {
      const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'billing_get', arguments: { operationId: 'billing.quota' } } };
      const answer = await post(calling, call, { ...session, connection: 'close' });
      expect(answer.head).toContain('content-type: text/event-stream');
      expect(answer.head).toMatch(/\r\nconnection: close(\r\n|$)/);
      expect(answer.endedAfterAnswer).toBe(true);
    } finally {
      calling.destroy();
    }
  });

  it('a client that does not ask to close keeps its connection: two initializes on one socket', async () => {
    const socket = await opened();
    try {
      const one = await post(socket, initialize(1), {});
      expect(one.head).toMatch(/\r\nconnection: keep-alive(\r\n|$)/);
      const two = await post(socket, initialize(2), {});
      expect(two.head).toContain('200 ok');
      expect(two.sessionId).not.toBe(one.sessionId);
    } finally {
      socket.destroy();
    }
  });
});
