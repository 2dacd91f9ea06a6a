// A proxy in front of the sandbox that can hold a write (POST/PUT/DELETE) at two moments: when it
// has arrived whole (it has left our server: the API may or may not take it), and when the API has
// answered it (the work is done: the answer not yet back). A test kills the server while it holds,
// then says what happens to the held request: forwarded all the same (the API took it though its
// sender died) or dropped; an answer released or dropped. Reads pass straight through.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type HoldAt = 'none' | 'arrival' | 'answer';

export interface Held {
  /** At arrival: sends it on to the API; resolves once the API answered (the answer is released to the sender, if it is still there). */
  forward(): Promise<void>;
  /** Drops the connection without an answer (at arrival: the API never gets it; at answer: the work is done, the answer lost). */
  drop(): void;
  /** At answer: the answer goes back to the sender. */
  release(): void;
}

export interface HoldingProxy {
  baseUrl: string;
  /** Holds the next write at `at`; `held` resolves when it is held there. */
  hold(at: HoldAt): { held: Promise<Held> };
  /** Writes the proxy has seen arrive (whether it forwarded them or not). */
  writesSeen(): number;
  close(): Promise<void>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const upstream = new URL(target);
  let armed: { at: HoldAt; resolve: (held: Held) => void } | undefined;
  let writes = 0;
  const sockets = new Set<Socket>();

  /** The request sent on to the API, its whole answer read. */
  const pass = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      const out = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host, connection: 'close' },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) }));
          answer.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  const reply = (res: ServerResponse, answer: { status: number; headers: IncomingMessage['headers']; body: Buffer }) => {
    if (res.destroyed || res.socket?.destroyed) return;
    const headers = { ...answer.headers };
    delete headers.connection;
    delete headers['transfer-encoding'];
    headers['content-length'] = String(answer.body.length);
    try {
      res.writeHead(answer.status, headers);
      res.end(answer.body);
    } catch {
      // The sender is gone.
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const write = WRITES.has(req.method ?? 'GET');
      if (write) writes++;
      const hold = write ? armed : undefined;
      if (write) armed = undefined;
      const drop = (): void => {
        req.socket.destroy();
      };
      if (!hold || hold.at === 'none') {
        pass(req, body).then((answer) => reply(res, answer), drop);
        return;
      }
      if (hold.at === 'arrival') {
        hold.resolve({
          forward: () => pass(req, body).then((answer) => reply(res, answer), drop),
          drop,
          release: () => undefined,
        });
        return;
      }
      pass(req, body).then((answer) => {
        hold.resolve({ forward: async () => undefined, drop, release: () => reply(res, answer) });
      }, drop);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    hold: (at) => ({ held: new Promise<Held>((resolve) => (armed = { at, resolve })) }),
    writesSeen: () => writes,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
