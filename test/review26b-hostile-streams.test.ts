// Review 26b: hostile clients of 2025 sessions' notification streams (GET), with raw sockets. Many
// GETs for one session are each refused 409 at once and the session's one stream goes on; a
// Last-Event-ID of garbage or of another session's stream replays nothing (the service keeps no
// event store) and opens no second stream; another key can neither open a session's stream nor end
// the session (DELETE), and the owner is still served; a session pushed out by made-up keys' new
// sessions ends its stream, so streams never outlive their sessions.
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service, type ServiceOptions } from '../packages/http/src/service.js';
import { openLegacySession, openRawStream, postInSession } from './legacy-streams.js';

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

const openSession = (key: string) => openLegacySession((service as Service).url, key, VERSION);
const openStream = (sessionId: string, key: string, extra: Record<string, string> = {}) =>
  openRawStream((service as Service).url, key, sessionId, { version: VERSION, extra, sockets });
const listTools = (sessionId: string, key: string) =>
  postInSession((service as Service).url, key, sessionId, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, VERSION);

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
