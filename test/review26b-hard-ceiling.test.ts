// Review 26b: the hard ceiling of open sockets. Past ENGAGE_HTTP_MAX_CONNECTIONS a socket is
// marked and its request answered 503; past the ceiling a little above it (server.maxConnections)
// Node closes a new socket unread. What a client over the ceiling sees, and that the service goes
// on serving the clients it already holds (a keep-alive connection, a 2025 notification stream)
// and new ones once the flood's sockets are gone.
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import type { Service, ServiceOptions } from '../packages/http/src/service.js';
import { openConnections, rawClientsPerTest } from './raw-clients.js';

let sandbox: Sandbox;
let service: Service | undefined;
const { sockets, logs, serve: start } = rawClientsPerTest((started) => (sandbox = started));
const serve = async (overrides: Partial<ServiceOptions>) => (service = await start(overrides));
const connectionsOpen = () => openConnections(service as Service);

async function until(check: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A socket to the service, connected, with everything it receives gathered and its end noted. */
interface Peer {
  socket: Socket;
  received: () => string;
  closed: Promise<{ error?: string }>;
}

function peer(): Promise<Peer> {
  const { port } = new URL((service as Service).url);
  return new Promise((resolve, reject) => {
    let received = '';
    let error: string | undefined;
    const socket = connect(Number(port), '127.0.0.1', () => resolve({ socket, received: () => received, closed }));
    const closed = new Promise<{ error?: string }>((done) => socket.once('close', () => done(error === undefined ? {} : { error })));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', (thrown: NodeJS.ErrnoException) => {
      error = thrown.code ?? thrown.message;
      reject(thrown);
    });
    sockets.push(socket);
  });
}

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

function request(path: string, headers: Record<string, string> = {}, body?: string): string {
  const lines = Object.entries({ host: 'localhost', ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) });
  return `${body === undefined ? 'GET' : 'POST'} ${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n${body ?? ''}`;
}

const modernCall = (key: string) =>
  request(
    '/mcp/contact',
    {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
    },
    TOOLS_LIST,
  );

/** Writes `text` on the peer's socket and waits until what it received holds a whole answer to it. */
async function ask(client: Peer, text: string): Promise<string> {
  const from = client.received().length;
  client.socket.write(text);
  await until(() => {
    const got = client.received().slice(from);
    const head = got.indexOf('\r\n\r\n');
    if (head < 0) return false;
    const length = /content-length: (\d+)/i.exec(got.slice(0, head))?.[1];
    return length === undefined ? got.endsWith('0\r\n\r\n') : Buffer.byteLength(got.slice(head + 4)) >= Number(length);
  });
  return client.received().slice(from);
}

/** The request reached the MCP face (its JSON-RPC answer, whatever it says), not a connection refusal. */
function expectServed(answer: string): void {
  expect(answer).not.toMatch(/^HTTP\/1\.1 503 /);
  expect(answer).toContain('"jsonrpc":"2.0"');
}

describe('the hard ceiling of open sockets', () => {
  it('closes a socket over it unread, logs the burst once, and goes on serving the clients it holds and then new ones', { timeout: 30_000 }, async () => {
    // ENGAGE_HTTP_MAX_CONNECTIONS 2: the ceiling is 2 + 64.
    const { server } = await serve({ maxConnections: 2 });
    expect(server.maxConnections).toBe(66);
    // A tenant's keep-alive connection, made before the flood, and served.
    const tenant = await peer();
    expectServed(await ask(tenant, modernCall(sandbox.keys.full)));
    // The flood: 65 sockets that send nothing (one more under the cap, 64 over it and marked).
    const flood = await Promise.all(Array.from({ length: 65 }, () => peer()));
    await until(async () => (await connectionsOpen()) === 66);
    // Over the ceiling: the socket is closed at once, before any byte is read or any status sent.
    const over = await peer().catch((error: Error) => error);
    if (over instanceof Error) expect(over.message).toMatch(/ECONNRESET|EPIPE/);
    else {
      over.socket.write(modernCall(sandbox.keys.full));
      await over.closed;
      expect(over.received()).toBe('');
    }
    expect(logs.filter((line) => line.includes('refusing connections over')).length).toBe(1);
    // The tenant's connection is still served, whatever the flood holds.
    expectServed(await ask(tenant, modernCall(sandbox.keys.full)));
    // The flood goes; a new client is served again.
    for (const socket of flood) socket.socket.destroy();
    await until(async () => (await connectionsOpen()) === 1);
    const next = await peer();
    expectServed(await ask(next, modernCall(sandbox.keys.full)));
  });

  it('closes a marked socket 5 s after it came, even one that trickles a byte a second (it held its place until the headers timeout)', {
    timeout: 30_000,
  }, async () => {
    // The headers timeout (12 s here, 30 s by default) answers 408 a request not whole by then.
    await serve({ maxConnections: 1, receiveTimeoutMs: 12_000 });
    await peer();
    await until(async () => (await connectionsOpen()) === 1);
    const trickler = await peer();
    const text = request('/mcp/contact', { authorization: `Bearer ${sandbox.keys.full}`, 'x-pad': 'x'.repeat(60) });
    let sent = 0;
    const drip = setInterval(() => {
      if (!trickler.socket.destroyed && sent < text.length - 4) trickler.socket.write(text[sent++] as string);
    }, 1_000);
    const ended = await trickler.closed;
    clearInterval(drip);
    // Closed by the service before its request was whole: no 408 after the headers timeout, and no answer.
    expect(sent).toBeLessThan(text.length - 4);
    expect(trickler.received()).toBe('');
    expect(ended.error).toBeUndefined();
  });

  it('answers a probe on a marked socket and then closes it (polling /healthz kept an over-cap socket open for good)', async () => {
    await serve({ maxConnections: 1 });
    await peer();
    await until(async () => (await connectionsOpen()) === 1);
    const marked = await peer();
    const answer = await ask(marked, request('/healthz'));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    await marked.closed;
  });
});
