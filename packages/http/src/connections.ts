// Open TCP connections: a cap for the whole service and, optionally, per client address. Node
// accepts a socket before anything is read from it; a socket over the cap is marked, its first
// request answered 503 with Retry-After and `Connection: close` (a client reads why), and a marked
// socket that sends nothing is closed after a few seconds. Past a hard ceiling a little above the
// cap, Node's own server.maxConnections closes new sockets at once, unread (no status is possible
// then): marked sockets cannot pile up either. A marked socket lives at most a few seconds whatever
// it sends (a byte now and then, or probes, which it may still ask: answered, then closed).
// Refusals are logged once per burst, not per socket.
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { JsonLog } from './log.js';
import { sendRefusal } from './respond.js';

export interface ConnectionLimits {
  /** Open connections, all clients together (0: no cap). */
  maxConnections: number;
  /** Open connections from one address (0: no cap). Off behind a proxy: every connection comes from its address. */
  maxConnectionsPerAddress: number;
}

const OVER = Symbol('engage.overConnectionCap');
/** How long a socket over the cap may stay open, from its coming. */
const REFUSED_GRACE_MS = 5_000;
const BURST_QUIET_MS = 10_000;
const REFUSAL = {
  status: 503,
  error: 'too_many_connections',
  message: 'Too many open connections to this service; close idle ones and try again later.',
  headers: { 'retry-after': '5', connection: 'close' },
};

export class ConnectionCap {
  private open = 0;
  private readonly byAddress = new Map<string, number>();
  private burst: NodeJS.Timeout | undefined;
  private refusedInBurst = 0;
  private refusedSinceTick = 0;

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly log: JsonLog,
    /** Told each connection refused (engage_http_refused_total, too_many_connections). */
    private readonly counted: () => void = () => undefined,
  ) {}

  attach(server: Server): void {
    const { maxConnections } = this.limits;
    if (maxConnections > 0) server.maxConnections = maxConnections + Math.max(64, Math.ceil(maxConnections / 8));
    server.on('drop', () => this.refused('the hard ceiling (closed unread)'));
    server.on('connection', (socket: Socket) => this.admit(socket));
  }

  private admit(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    const fromAddress = (this.byAddress.get(address) ?? 0) + 1;
    this.open++;
    this.byAddress.set(address, fromAddress);
    socket.once('close', () => {
      this.open--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left === 0) this.byAddress.delete(address);
      else this.byAddress.set(address, left);
    });
    const { maxConnections, maxConnectionsPerAddress } = this.limits;
    const over =
      maxConnections > 0 && this.open > maxConnections
        ? 'the service'
        : maxConnectionsPerAddress > 0 && fromAddress > maxConnectionsPerAddress
          ? 'one address'
          : undefined;
    if (!over) return;
    (socket as Socket & { [OVER]?: boolean })[OVER] = true;
    // From its coming, not an idle timeout: one that sent a byte a second kept its place over the
    // cap until Node's headers timeout (30 s), six times as long.
    const grace = setTimeout(() => socket.destroy(), REFUSED_GRACE_MS);
    socket.once('close', () => clearTimeout(grace));
    this.refused(
      over === 'the service' ? `ENGAGE_HTTP_MAX_CONNECTIONS (${maxConnections})` : `ENGAGE_HTTP_MAX_CONNECTIONS_PER_ADDRESS (${maxConnectionsPerAddress})`,
    );
  }

  /**
   * True when the request came on a socket over the cap: it was answered 503 and its connection is
   * closing. A probe there (`probe`) is left to be answered, and its connection closed after it:
   * kept alive, a socket polling /healthz every few seconds held its place over the cap for good.
   */
  refuse(socket: Socket, res: ServerResponse, probe = false): boolean {
    if (!(socket as Socket & { [OVER]?: boolean })[OVER]) return false;
    res.shouldKeepAlive = false;
    if (probe) return false;
    sendRefusal(res, REFUSAL);
    return true;
  }

  /** The first refusal of a burst is logged; the burst ends (with its count) after BURST_QUIET_MS without one. */
  private refused(what: string): void {
    this.counted();
    this.refusedInBurst++;
    this.refusedSinceTick++;
    if (this.burst) return;
    this.log.warn(`refusing connections over ${what}: ${this.open} open`);
    this.burst = setInterval(() => {
      if (this.refusedSinceTick > 0) {
        this.refusedSinceTick = 0;
        return;
      }
      clearInterval(this.burst);
      this.burst = undefined;
      this.log.warn(`no connection refused for ${BURST_QUIET_MS / 1000} s (${this.open} open); ${this.refusedInBurst} refused in that burst`);
      this.refusedInBurst = 0;
    }, BURST_QUIET_MS).unref();
  }

  close(): void {
    clearInterval(this.burst);
  }
}
