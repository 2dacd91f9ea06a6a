// Review 26b: a 2025 session has one notification stream (GET). When its client went away (a
// network drop, a proxy restarted), the service held the dead stream until the SDK's next
// keep-alive comment, up to 15 s: the SDK's toNodeHandler notices a closed response only when it
// has something to write. Meanwhile every GET to reopen it was answered 409 ("Only one SSE stream
// is allowed per session"), and the SDK's own client, which retries twice (after 1 s and 1.5 s),
// gave up the stream for the rest of the session. A stream whose client went away is now let go at
// once, and a second GET while one is really open is still refused.
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { openLegacySession, openRawStream } from './legacy-streams.js';
import { openConnections } from './raw-clients.js';

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

const openSession = () => openLegacySession(service.url, sandbox.keys.full, VERSION);
const openStream = (sessionId: string) => openRawStream(service.url, sandbox.keys.full, sessionId, { version: VERSION, sockets });

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
    while ((await openConnections(service)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await openStream(sessionId);
    expect(again.status).toBe(200);
    again.socket.destroy();
  });
});
