// A hostile stand-in for the API, on loopback: it answers whatever a test tells it to (the key
// echoed back, bodies nested thousands deep, absurd headers, errors inside the envelope), and
// records what it was asked. The sandbox stays faithful; this one is not meant to be.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Domain } from '@engage-mcp/shared';
import { DOMAINS, inProcess, type InProcess } from './helpers.js';

export const HOSTILE_KEY = `eng_live_${'5e1f0a9c3b7d2e48'.repeat(2)}a1b2c3d4e5f60718`;

export interface SeenRequest {
  method: string;
  path: string;
  key: string | undefined;
  body: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A string or a Buffer is sent as it is; anything else as JSON. */
  body?: unknown;
  /** Bytes written to the socket instead of an HTTP answer (which may then be no HTTP at all), and the socket closed. */
  raw?: string;
  /** The status and headers go at once, the body this much later. */
  bodyDelayMs?: number;
}

export type Responder = (request: SeenRequest) => Reply | Promise<Reply>;

export interface HostileApi {
  baseUrl: string;
  key: string;
  requests: SeenRequest[];
  /** What every request is answered with from now on (default: an empty envelope). */
  respond(responder: Responder): void;
  close(): Promise<void>;
}

export const envelope = (data: unknown, status = 200, errorCode = 0): Reply => ({ body: { status, errorCode, data } });

export async function startHostileApi(): Promise<HostileApi> {
  let responder: Responder = () => envelope([]);
  const requests: SeenRequest[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const seen = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      key: req.headers['x-api-key'] as string | undefined,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(seen);
    const reply = await responder(seen);
    if (reply.raw !== undefined) {
      req.socket.end(reply.raw);
      return;
    }
    const body = typeof reply.body === 'string' || Buffer.isBuffer(reply.body) ? reply.body : JSON.stringify(reply.body ?? null);
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    if (reply.bodyDelayMs === undefined) res.end(body);
    else {
      res.flushHeaders();
      const timer = setTimeout(() => res.end(body), reply.bodyDelayMs);
      res.on('close', () => clearTimeout(timer));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    key: HOSTILE_KEY,
    requests,
    respond: (next) => void (responder = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A stand-in for the file (started once) and the servers a test opens against it (closed after each
 * test, when the stand-in's requests are cleared and it answers an empty list again).
 */
export function hostileApiPerFile() {
  let api: HostileApi | undefined;
  const open: InProcess[] = [];
  beforeAll(async () => {
    api = await startHostileApi();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()));
    if (!api) return;
    api.requests.length = 0;
    api.respond(() => envelope([]));
  });
  afterAll(() => api?.close());
  return {
    get api(): HostileApi {
      if (!api) throw new Error('the hostile API starts in beforeAll');
      return api;
    },
    /** A domain's server in process against the stand-in, with its key and these settings. */
    async serve(domain: string, env: Record<string, string> = {}): Promise<InProcess> {
      const server = await inProcess(DOMAINS[domain] as Domain, { baseUrl: this.api.baseUrl, keys: { full: this.api.key } as never }, { env });
      open.push(server);
      return server;
    },
  };
}
