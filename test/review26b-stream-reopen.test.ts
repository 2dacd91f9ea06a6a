// Review 26b: a 2025 session has one notification stream (GET). When its client went away (a
// network drop, a proxy restarted), the service held the dead stream until the SDK's next
// keep-alive comment, up to 15 s: the SDK's toNodeHandler notices a closed response only when it
// has something to write. Meanwhile every GET to reopen it was answered 409 ("Only one SSE stream
// is allowed per session"), and the SDK's own client, which retries twice (after 1 s and 1.5 s),
// gave up the stream for the rest of the session. A stream whose client went away is now let go at
// once, and a second GET while one is really open is still refused.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';

let sandbox: Sandbox;
let service: Service;
const sockets: Socket[] = [];
const VERSION = '2025-06-18';
beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {} });
});
afterAll(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await service?.close();
  await sandbox?.close();
});

async function openSession(): Promise<string> {
  const headers = { authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'review26b', version: '1' } },
  };
  const opened = await fetch(new URL('/mcp/billing', service.url), { method: 'POST', headers, body: JSON.stringify(initialize) });
  const sessionId = opened.headers.get('mcp-session-id') as string;
  await opened.text();
  const initialized = await fetch(new URL('/mcp/billing', service.url), {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return sessionId;
}

/** A raw GET of the session's stream: the socket, once the answer's status line came. */
function openStream(sessionId: string): Promise<{ socket: Socket; status: number }> {
  const { port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(
        'GET /mcp/billing HTTP/1.1\r\nhost: localhost\r\n' +
          `authorization: Bearer ${sandbox.keys.full}\r\naccept: text/event-stream\r\n` +
          `mcp-session-id: ${sessionId}\r\nmcp-protocol-version: ${VERSION}\r\n\r\n`,
      ),
    );
    sockets.push(socket);
    let got = '';
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString();
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(got)?.[1];
      if (status && got.includes('\r\n\r\n')) resolve({ socket, status: Number(status) });
    });
    socket.once('error', reject);
  });
}

async function openConnections(): Promise<number> {
  return new Promise((resolve) => service.server.getConnections((_error, count) => resolve(count)));
}

describe("a 2025 session's notification stream whose client went away", () => {
  it('can be opened again as soon as the service has seen the client go (no 409 for the dead one)', { timeout: 30_000 }, async () => {
    const sessionId = await openSession();
    const first = await openStream(sessionId);
    expect(first.status).toBe(200);
    // While it is open, a second stream of the same session is refused.
    const second = await openStream(sessionId);
    expect(second.status).toBe(409);
    second.socket.destroy();
    first.socket.destroy();
    while ((await openConnections()) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await openStream(sessionId);
    expect(again.status).toBe(200);
    again.socket.destroy();
  });
});
