// A tiny round-robin HTTP reverse proxy for the soak: what a load balancer in front of the
// replicas does, and no more. Request and response bodies stream through. A request whose
// connection a replica refused (it never reached one) goes to the other replica; anything that
// may have reached one is never sent again. Replicas whose /readyz is not 200 get no new requests.
// Standalone: tsx bench/proxy.ts [--port N] http://127.0.0.1:A http://127.0.0.1:B
import { Agent, createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface Upstream {
  url: URL;
  /** /readyz answered 200 at the last check (or was never checked). */
  up: boolean;
  /** Taken out of rotation by the operator (as a load balancer's drain), whatever its health. */
  excluded: boolean;
  forwarded: number;
}

export interface ProxyStats {
  requests: number;
  /** Connections a replica refused, the request sent to another instead. */
  retriedRefused: number;
  /** Answered 502 by the proxy: no replica could be reached, or one failed after the request reached it. */
  badGateway: number;
  /** Of those, after the request may have reached a replica (never retried), by error code. */
  failedAfterReach: number;
  failedAfterReachCodes: Record<string, number>;
  clientAborts: number;
}

export interface Proxy {
  url: string;
  port: number;
  upstreams: Upstream[];
  stats: ProxyStats;
  /** Takes one upstream out of rotation (true) or puts it back (false): no new requests, those in flight finish. */
  exclude(index: number, excluded: boolean): void;
  /** Replaces the address of one upstream (a replica restarted elsewhere). */
  setTarget(index: number, target: string): void;
  close(): Promise<void>;
}

export interface ProxyOptions {
  port?: number;
  healthPath?: string;
  healthIntervalMs?: number;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function forwardable(headers: IncomingMessage['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/** Errors that prove the request never reached the replica: the connection itself was refused. */
const NEVER_REACHED = new Set(['ECONNREFUSED']);

export async function startProxy(targets: string[], options: ProxyOptions = {}): Promise<Proxy> {
  const upstreams: Upstream[] = targets.map((target) => ({ url: new URL(target), up: true, excluded: false, forwarded: 0 }));
  const stats: ProxyStats = { requests: 0, retriedRefused: 0, badGateway: 0, failedAfterReach: 0, failedAfterReachCodes: {}, clientAborts: 0 };
  // Keep-alive to the replicas; an idle socket is dropped before the service's own 5 s keep-alive ends it.
  const agent = new Agent({ keepAlive: true, timeout: 4_000, scheduling: 'lifo' });
  let next = 0;

  /** The next upstream in turn among those up (any, if none is), skipping `except`. */
  function pick(except: Set<number>): number | undefined {
    const candidates = upstreams.map((_, index) => index).filter((index) => !except.has(index) && !upstreams[index]!.excluded);
    if (candidates.length === 0) return undefined;
    const healthy = candidates.filter((index) => upstreams[index]!.up);
    const pool = healthy.length > 0 ? healthy : candidates;
    const chosen = pool[next % pool.length] as number;
    next = (next + 1) % 1_000_000;
    return chosen;
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    stats.requests++;
    // What was read of the body before a connection was made: sent again if that connection is refused.
    const held: Buffer[] = [];
    let bodyEnded = false;
    let answered = false;
    const tried = new Set<number>();
    let current: ReturnType<typeof httpRequest> | undefined;
    let reached = false;

    const fail = (status: number, message: string) => {
      stats.badGateway++;
      if (res.headersSent) return void res.destroy();
      const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };

    req.on('data', (chunk: Buffer) => {
      if (!reached) held.push(chunk);
      if (current && !current.write(chunk)) {
        req.pause();
        current.once('drain', () => req.resume());
      }
    });
    req.on('end', () => {
      bodyEnded = true;
      current?.end();
    });
    res.on('close', () => {
      if (!res.writableFinished) {
        stats.clientAborts++;
        current?.destroy();
      }
    });

    const attempt = () => {
      const index = pick(tried);
      if (index === undefined) return fail(502, 'No replica could be reached (connection refused); nothing was sent.');
      tried.add(index);
      const upstream = upstreams[index] as Upstream;
      upstream.forwarded++;
      const outgoing = httpRequest({
        host: upstream.url.hostname,
        port: upstream.url.port,
        method: req.method,
        path: req.url,
        headers: { ...forwardable(req.headers), 'x-forwarded-for': req.socket.remoteAddress ?? '' },
        agent,
      });
      current = outgoing;
      outgoing.on('socket', (socket: Socket) => {
        // A reused keep-alive socket is connected already: from here on the request may reach the replica.
        const connected = () => {
          reached = true;
          held.length = 0;
        };
        if (!socket.connecting) connected();
        else socket.once('connect', connected);
      });
      outgoing.on('response', (upstreamRes) => {
        answered = true;
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, forwardable(upstreamRes.headers));
        upstreamRes.pipe(res);
        upstreamRes.on('error', () => res.destroy());
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        if (current !== outgoing) return;
        if (!reached && !answered && NEVER_REACHED.has(error.code ?? '')) {
          upstream.up = false;
          stats.retriedRefused++;
          return attempt();
        }
        if (!answered) {
          stats.failedAfterReach++;
          const code = error.code ?? error.message;
          stats.failedAfterReachCodes[code] = (stats.failedAfterReachCodes[code] ?? 0) + 1;
          return fail(502, `The replica failed after the request may have reached it (${error.code ?? error.message}); it was not sent again.`);
        }
        res.destroy();
      });
      for (const chunk of held) outgoing.write(chunk);
      if (bodyEnded) outgoing.end();
    };
    attempt();
  }

  const server = createServer(handle);
  server.keepAliveTimeout = 10_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  // Health: /readyz of each replica, often; a replica draining (503) or gone gets no new requests.
  const healthPath = options.healthPath ?? '/readyz';
  const check = (upstream: Upstream) => {
    const probe = httpRequest(
      { host: upstream.url.hostname, port: upstream.url.port, path: healthPath, method: 'GET', agent: false, timeout: 1_000 },
      (answer) => {
        upstream.up = answer.statusCode === 200;
        answer.resume();
      },
    );
    probe.on('timeout', () => probe.destroy(new Error('timeout')));
    probe.on('error', () => (upstream.up = false));
    probe.end();
  };
  const health = setInterval(() => upstreams.forEach(check), options.healthIntervalMs ?? 250);
  health.unref();

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    upstreams,
    stats,
    exclude(index, excluded) {
      const upstream = upstreams[index];
      if (upstream) upstream.excluded = excluded;
    },
    setTarget(index, target) {
      const upstream = upstreams[index];
      if (upstream) upstream.url = new URL(target);
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(health);
        agent.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// Standalone use.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const portAt = args.indexOf('--port');
  const port = portAt >= 0 ? Number(args[portAt + 1]) : 0;
  const targets = args.filter((arg, index) => arg !== '--port' && index !== portAt + 1 && /^https?:\/\//.test(arg));
  if (targets.length === 0) {
    process.stderr.write('Usage: tsx bench/proxy.ts [--port N] http://host:port [http://host:port ...]\n');
    process.exit(2);
  }
  const proxy = await startProxy(targets, { port });
  process.stdout.write(`${JSON.stringify({ url: proxy.url })}\n`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
