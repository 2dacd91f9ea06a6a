// Review 26b: a client that never reads its answer. Node keeps what a response writes in the
// process until the kernel takes it, and the kernel takes it only as the client reads. Any caller
// with a made-up key can get a large answer without the API (an unknown tool's name, or the
// JSON-RPC id, comes back in the error: a 4 MiB request, a 4 MiB answer); one that then never read
// held that answer, its connection and a place in its key's limit until the call's deadline (12
// minutes): 50 such clients held about 400 MiB of the service's memory. A connection with bytes
// waiting to go out of which the client takes none for unreadAnswerMs (60 s by default) is now
// closed; a client that reads slowly, but takes each write within that bound, gets its whole answer.
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { Service } from '../packages/http/src/service.js';
import { openConnections, rawClientsPerTest } from './raw-clients.js';

let sandbox: Sandbox;
let service: Service | undefined;
const { sockets, logs, serve: start } = rawClientsPerTest((started) => (sandbox = started));
const serve = async (unreadAnswerMs: number) => (service = await start({ unreadAnswerMs }));
const connectionsOpen = () => openConnections(service as Service);

const ID_BYTES = 4_000_000;

/** A raw 2026-07-28 POST whose JSON-RPC id (4 MB) the service's error answer echoes; the socket does not read until told. */
function askForLargeAnswer(key: string): Socket {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'z'.repeat(ID_BYTES), method: 'tools/list', params: {} });
  const { port } = new URL((service as Service).url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(
    `POST /mcp HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`,
  );
  socket.write(body);
  sockets.push(socket);
  return socket;
}

describe('a client that never reads its answer', () => {
  it('has its connection closed once it takes none of the answer, and other keys are served meanwhile', { timeout: 30_000 }, async () => {
    await serve(1_000);
    askForLargeAnswer('made-up-key-never-reads-1');
    askForLargeAnswer('made-up-key-never-reads-2');
    // Both answers are written (the kernel holds part, the process the rest).
    while ((await connectionsOpen()) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const served = await fetch(new URL('/mcp/billing', (service as Service).url), {
      method: 'POST',
      headers: { authorization: `Bearer ${sandbox.keys.full}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'review26b', version: '1' } },
      }),
    });
    expect(served.status).toBe(200);
    await served.text();
    // Before: held until the call's deadline (12 minutes).
    while ((await connectionsOpen()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(logs.some((line) => line.includes('took none of its answer'))).toBe(true);
  });

  it('gives a client that reads slowly, but reads, its whole answer', { timeout: 30_000 }, async () => {
    // Each write of the answer must be taken within unreadAnswerMs; this client reads slowly, but that fast.
    await serve(5_000);
    const socket = askForLargeAnswer('made-up-key-reads-slowly');
    let received = 0;
    const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      // About 1.3 MB a second, in small sips: the answer goes out over several sweeps of the service.
      socket.pause();
      setTimeout(() => socket.resume(), 50);
    });
    socket.resume();
    const whole = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (received > ID_BYTES) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    await Promise.race([whole, ended]);
    expect(received).toBeGreaterThan(ID_BYTES);
  });
});
