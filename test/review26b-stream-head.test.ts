// Review 26b: a 2025 session's notification stream (GET with its Mcp-Session-Id), opened by a raw
// HTTP client, got no status line and no headers while the session was idle: Node holds a
// response's head until its first body bytes, and the SDK's toNodeHandler writes the head and then
// waits for the stream's first event, which on an idle session is the SDK's first keep-alive
// comment, 15 s later. A client or proxy that waits less for a response's headers gave up on the
// stream. The head is now sent as soon as the stream is opened, alone, before any event.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';

let sandbox: Sandbox;
let service: Service;
const sockets: Socket[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {} });
});
afterAll(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await service?.close();
  await sandbox?.close();
});

/** A 2025-era session of `version`, initialized: its id. */
async function openSession(version: string): Promise<string> {
  const headers = { authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'review26b', version: '1' } },
  };
  const opened = await fetch(new URL('/mcp/billing', service.url), { method: 'POST', headers, body: JSON.stringify(initialize) });
  const sessionId = opened.headers.get('mcp-session-id') as string;
  await opened.text();
  const initialized = await fetch(new URL('/mcp/billing', service.url), {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': version },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return sessionId;
}

/** A raw GET of the session's stream: resolves with the first bytes the client receives once they hold a whole head. */
function firstBytesOfStream(sessionId: string, version: string): Promise<{ head: string; after: string }> {
  const { port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(
        'GET /mcp/billing HTTP/1.1\r\nhost: localhost\r\n' +
          `authorization: Bearer ${sandbox.keys.full}\r\naccept: text/event-stream\r\n` +
          `mcp-session-id: ${sessionId}\r\nmcp-protocol-version: ${version}\r\n\r\n`,
      ),
    );
    sockets.push(socket);
    let got = '';
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString();
      const end = got.indexOf('\r\n\r\n');
      if (end >= 0) resolve({ head: got.slice(0, end), after: got.slice(end + 4) });
    });
    socket.once('error', reject);
    socket.once('end', () => reject(new Error(`the stream ended: ${got}`)));
  });
}

describe("an idle 2025 session's notification stream, opened by a raw HTTP client", () => {
  for (const version of ['2025-06-18', '2025-03-26']) {
    it(`${version}: the status and headers come at once, alone, before any event or keep-alive`, { timeout: 30_000 }, async () => {
      const sessionId = await openSession(version);
      const { head, after } = await firstBytesOfStream(sessionId, version);
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(head.toLowerCase()).toContain('content-type: text/event-stream');
      expect(head.toLowerCase()).toContain(`mcp-session-id: ${sessionId}`);
      // Before: the head came only with the SDK's first keep-alive comment (": keepalive"), 15 s on.
      expect(after).toBe('');
    });
  }
});
