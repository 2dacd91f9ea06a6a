// Raw HTTP clients of a 2025-era session on the remote service (/mcp/billing): the session opened
// over POST, and its notification stream (GET) read byte by byte from a socket, as the review26b
// tests attack them.
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

const PATH = '/mcp/billing';
const jsonHeaders = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

/** A 2025-era session of `version` with `key`, initialized: its id. */
export async function openLegacySession(serviceUrl: string, key: string, version = '2025-06-18'): Promise<string> {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'review26b', version: '1' } },
  };
  const opened = await fetch(new URL(PATH, serviceUrl), { method: 'POST', headers: jsonHeaders(key), body: JSON.stringify(initialize) });
  const sessionId = opened.headers.get('mcp-session-id') as string;
  await opened.text();
  const initialized = await postInSession(serviceUrl, key, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' }, version);
  expect(initialized).toBe(202);
  return sessionId;
}

/** A JSON-RPC message POSTed in the session: the answer's status (its body read and dropped). */
export async function postInSession(serviceUrl: string, key: string, sessionId: string, message: object, version = '2025-06-18'): Promise<number> {
  const answer = await fetch(new URL(PATH, serviceUrl), {
    method: 'POST',
    headers: { ...jsonHeaders(key), 'mcp-session-id': sessionId, 'mcp-protocol-version': version },
    body: JSON.stringify(message),
  });
  await answer.text();
  return answer.status;
}

export interface RawStream {
  socket: Socket;
  status: number;
  /** The response's head, without its closing blank line. */
  head: string;
  /** What came after the head in the same reads as the head. */
  withHead: string;
  /** Everything received after the head, so far. */
  body: () => string;
  /** Resolves when the socket closes. */
  ended: Promise<void>;
}

/**
 * A raw GET of the session's stream; resolves once a whole head came. `sockets` collects the
 * socket, for the file to destroy after its tests; `extra` adds or replaces request headers.
 */
export function openRawStream(
  serviceUrl: string,
  key: string,
  sessionId: string,
  { version = '2025-06-18', extra = {}, sockets }: { version?: string; extra?: Record<string, string>; sockets: Socket[] },
): Promise<RawStream> {
  const { port } = new URL(serviceUrl);
  const lines = Object.entries({
    host: 'localhost',
    authorization: `Bearer ${key}`,
    accept: 'text/event-stream',
    'mcp-session-id': sessionId,
    'mcp-protocol-version': version,
    ...extra,
  }).map(([name, value]) => `${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET ${PATH} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`));
    sockets.push(socket);
    const ended = new Promise<void>((done) => socket.once('close', () => done()));
    let got = '';
    let resolved = false;
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString();
      const end = got.indexOf('\r\n\r\n');
      if (resolved || end < 0) return;
      resolved = true;
      resolve({
        socket,
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1]),
        head: got.slice(0, end),
        withHead: got.slice(end + 4),
        body: () => got.slice(end + 4),
        ended,
      });
    });
    socket.once('error', reject);
    socket.once('end', () => {
      if (!resolved) reject(new Error(`the stream ended before its head: ${got}`));
    });
  });
}
