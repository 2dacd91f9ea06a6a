// Review 26b: a 2025 session's notification stream (GET with its Mcp-Session-Id), opened by a raw
// HTTP client, got no status line and no headers while the session was idle: Node holds a
// response's head until its first body bytes, and the SDK's toNodeHandler writes the head and then
// waits for the stream's first event, which on an idle session is the SDK's first keep-alive
// comment, 15 s later. A client or proxy that waits less for a response's headers gave up on the
// stream. The head is now sent as soon as the stream is opened, alone, before any event.
import { describe, expect, it } from 'vitest';
import { openLegacySession, openRawStream } from './legacy-streams.js';
import { rawClientsPerFile } from './raw-clients.js';

const file = rawClientsPerFile();
const { sockets } = file;

describe("an idle 2025 session's notification stream, opened by a raw HTTP client", () => {
  for (const version of ['2025-06-18', '2025-03-26']) {
    it(`${version}: the status and headers come at once, alone, before any event or keep-alive`, { timeout: 30_000 }, async () => {
      const sessionId = await openLegacySession(file.service.url, file.sandbox.keys.full, version);
      const { head, withHead: after } = await openRawStream(file.service.url, file.sandbox.keys.full, sessionId, { version, sockets });
      expect(head).toMatch(/^HTTP\/1\.1 200 /);
      expect(head.toLowerCase()).toContain('content-type: text/event-stream');
      expect(head.toLowerCase()).toContain(`mcp-session-id: ${sessionId}`);
      // Before: the head came only with the SDK's first keep-alive comment (": keepalive"), 15 s on.
      expect(after).toBe('');
    });
  }
});
