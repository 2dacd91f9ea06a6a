// Review 26b: hostile clients of 2025 sessions' notification streams (GET), with raw sockets. Many
// GETs for one session are each refused 409 at once and the session's one stream goes on; a
// Last-Event-ID of garbage or of another session's stream replays nothing (the service keeps no
// event store) and opens no second stream; another key can neither open a session's stream nor end
// the session (DELETE), and the owner is still served; a session pushed out by made-up keys' new
// sessions ends its stream, so streams never outlive their sessions.
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';

let sandbox: Sandbox;
let service: Service | undefined;
const sockets: Socket[] = [];
const VERSION = '2025-06-18';

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await service?.close();
  service = undefined;
});
afterAll(async () => {
  await sandbox?.close();
});

async function serve(overrides: Partial<ServiceOptions> = {}): Promise<Service> {
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl }, catalogs: CATALOGS, port: 0, writeLog: () => {}, ...overrides });
  return service;
}

const base = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

async function openSession(key: string): Promise<string> {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'review26b', version: '1' } },
  };
  const opened = await fetch(new URL('/mcp/billing', (service as Service).url), { method: 'POST', headers: base(key), body: JSON.stringify(initialize) });
  const sessionId = opened.headers.get('mcp-session-id') as string;
  await opened.text();
  const initialized = await fetch(new URL('/mcp/billing', (service as Service).url), {
    method: 'POST',
    headers: { ...base(key), 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return sessionId;
}

interface Stream {
  socket: Socket;
  status: number;
  /** Everything received after the head. */
  body: () => string;
  ended: Promise<void>;
}

/** A raw GET of a session's stream; resolves once its head came. */
function openStream(sessionId: string, key: string, extra: Record<string, string> = {}): Promise<Stream> {
  const { port } = new URL((service as Service).url);
  const lines = Object.entries({
    host: 'localhost',
    authorization: `Bearer ${key}`,
    accept: 'text/event-stream',
    'mcp-session-id': sessionId,
    'mcp-protocol-version': VERSION,
    ...extra,
  }).map(([name, value]) => `${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET /mcp/billing HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`));
    sockets.push(socket);
    const ended = new Promise<void>((done) => socket.once('close', () => done()));
    let got = '';
    let resolved = false;
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString();
      const end = got.indexOf('\r\n\r\n');
      if (!resolved && end >= 0) {
        resolved = true;
        resolve({ socket, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1]), body: () => got.slice(end + 4), ended });
      }
    });
    socket.once('error', reject);
  });
}

async function listTools(sessionId: string, key: string): Promise<number> {
  const answer = await fetch(new URL('/mcp/billing', (service as Service).url), {
    method: 'POST',
    headers: { ...base(key), 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  await answer.text();
  return answer.status;
}

describe("hostile clients of a 2025 session's notification stream", () => {
  it('refuses every further GET of a session 409 at once, and the first stream stays open', async () => {
    await serve();
    const sessionId = await openSession(sandbox.keys.full);
    const first = await openStream(sessionId, sandbox.keys.full);
    expect(first.status).toBe(200);
    const more = await Promise.all(Array.from({ length: 20 }, () => openStream(sessionId, sandbox.keys.full)));
    for (const each of more) expect(each.status).toBe(409);
    expect(first.socket.destroyed).toBe(false);
    expect(await listTools(sessionId, sandbox.keys.full)).toBe(200);
  });

  it("replays nothing for a Last-Event-ID of garbage or of another session's stream, and opens no second stream", async () => {
    await serve();
    const theirs = await openSession(sandbox.keys.otherTenant);
    for (const lastEventId of ['garbage', `${theirs}_GET_stream_1`, '../../etc/passwd', 'x'.repeat(4000)]) {
      const mine = await openSession(sandbox.keys.full);
      const stream = await openStream(mine, sandbox.keys.full, { 'last-event-id': lastEventId });
      expect(stream.status).toBe(200);
      expect(stream.body()).toBe('');
      // Still this session's only stream: a second one is refused.
      expect((await openStream(mine, sandbox.keys.full)).status).toBe(409);
    }
  });

  it("refuses another key's GET and DELETE of a session (403), and the owner is still served", async () => {
    await serve();
    const sessionId = await openSession(sandbox.keys.full);
    expect((await openStream(sessionId, sandbox.keys.otherTenant)).status).toBe(403);
    const deleted = await fetch(new URL('/mcp/billing', (service as Service).url), {
      method: 'DELETE',
      headers: { authorization: `Bearer ${sandbox.keys.otherTenant}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION },
    });
    expect(deleted.status).toBe(403);
    expect(((await deleted.json()) as { error: string }).error).toBe('session_key');
    expect(await listTools(sessionId, sandbox.keys.full)).toBe(200);
    expect((await openStream(sessionId, sandbox.keys.full)).status).toBe(200);
  });

  it("ends a session's stream when the session is pushed out by made-up keys' new sessions", async () => {
    await serve({ maxUnacceptedSessions: 2 });
    const first = await openSession('made-up-key-stream-0');
    const stream = await openStream(first, 'made-up-key-stream-0');
    expect(stream.status).toBe(200);
    await openSession('made-up-key-stream-1');
    await openSession('made-up-key-stream-2');
    // The stream's last chunk: its answer is over (the connection itself may stay for another request).
    while (!stream.body().endsWith('0\r\n\r\n')) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await listTools(first, 'made-up-key-stream-0')).toBe(404);
  });
});
