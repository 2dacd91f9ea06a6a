// Review 26b: a 2025 session has one notification stream (GET). When its client went away (a
// network drop, a proxy restarted), the service held the dead stream until the SDK's next
// keep-alive comment, up to 15 s: the SDK's toNodeHandler notices a closed response only when it
// has something to write. Meanwhile every GET to reopen it was answered 409 ("Only one SSE stream
// is allowed per session"), and the SDK's own client, which retries twice (after 1 s and 1.5 s),
// gave up the stream for the rest of the session. A stream whose client went away is now let go at
// once, and a second GET while one is really open is still refused.
import { describe, expect, it } from 'vitest';
import { openLegacySession, openRawStream } from './legacy-streams.js';
import { openConnections, rawClientsPerFile } from './raw-clients.js';

const file = rawClientsPerFile();
const { sockets } = file;
const VERSION = '2025-06-18';

const openSession = () => openLegacySession(file.service.url, file.sandbox.keys.full, VERSION);
const openStream = (sessionId: string) => openRawStream(file.service.url, file.sandbox.keys.full, sessionId, { version: VERSION, sockets });

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
    while ((await openConnections(file.service)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const again = await openStream(sessionId);
    expect(again.status).toBe(200);
    again.socket.destroy();
  });
});
