// Answers a client does not take. Node keeps what a response writes in the process until the kernel
// takes it, and the kernel takes it only as the client reads. A caller with a made-up key can get a
// large answer without the API (an unknown tool's name or the JSON-RPC id comes back in the error:
// a 4 MiB request, a 4 MiB answer); one that then never read held that answer, its connection and
// a place in its key's limit until the call's deadline (12 minutes): 50 such clients held about
// 400 MiB. A connection with bytes waiting to go out of which the client takes none for stallMs is
// closed. A client that reads slowly still reads: every write of the answer that finishes starts
// the count again (Node tells no finer progress: a write of one 4 MiB event finishes once the kernel
// has taken all of it, so a client must take each event within stallMs, 60 s by default, as a request
// must arrive within 60 s). Closings are logged once per sweep, not per socket.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { JsonLog } from './log.js';

interface Progress {
  /** Bytes whose write finished. */
  done: number;
  /** When the client last took anything, or had nothing waiting. */
  since: number;
}

export class StalledAnswers {
  private readonly sockets = new Map<Socket, Progress>();
  private sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly stallMs: number,
    private readonly log: JsonLog,
  ) {}

  attach(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.sockets.set(socket, { done: 0, since: performance.now() });
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.sweep = setInterval(() => this.check(), Math.max(100, Math.floor(this.stallMs / 4))).unref();
    server.once('close', () => clearInterval(this.sweep));
  }

  private check(): void {
    const now = performance.now();
    let closed = 0;
    for (const [socket, last] of this.sockets) {
      const waiting = socket.writableLength;
      const done = socket.bytesWritten - waiting;
      const moved = done > last.done;
      last.done = done;
      if (waiting === 0 || moved) last.since = now;
      else if (now - last.since >= this.stallMs) {
        this.sockets.delete(socket);
        socket.destroy();
        closed++;
      }
    }
    if (closed > 0) this.log.warn(`closed ${closed} connection(s) whose client took none of its answer for ${Math.round(this.stallMs / 1000)} s`);
  }
}
