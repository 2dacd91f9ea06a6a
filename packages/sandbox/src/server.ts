// The HTTP server on loopback: each request through the pipeline, a 500 envelope for a handler
// that crashed, and a close that drops open connections and stops campaigns being sent.
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { handleRequest } from './pipeline.js';
import type { SandboxState } from './state.js';

export interface Listening {
  port: number;
  close(): Promise<void>;
}

export async function serve(sandbox: SandboxState, port: number): Promise<Listening> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handleRequest(sandbox, req, res).catch((error: unknown) => {
      process.stderr.write(`sandbox: handler error: ${(error as Error).stack ?? String(error)}\n`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 500, errorCode: 50000, message: 'internal error', data: null }));
      }
    });
  });
  server.keepAliveTimeout = 10_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        sandbox.cancelTimers();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
