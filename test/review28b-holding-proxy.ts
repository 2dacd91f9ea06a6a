// A proxy in front of the sandbox that can hold a write (POST/PUT/DELETE) at two moments: when it
// has arrived whole (it has left our server: the API may or may not take it), and when the API has
// answered it (the work is done: the answer not yet back). A test kills the server while it holds,
// then says what happens to the held request: forwarded all the same (the API took it though its
// sender died) or dropped; an answer released or dropped. Reads pass straight through.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type LaunchedServer, type Sandbox } from '../packages/sandbox/src/index.js';
import type { Seeded } from './seeded.js';

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
  /** Holds the next write (or the next request of `method`, a read included) at `at`; `held` resolves when it is held there. */
  hold(at: HoldAt, method?: string): { held: Promise<Held> };
  /** Writes the proxy has seen arrive (whether it forwarded them or not). */
  writesSeen(): number;
  /**
   * Once every request that reached it has been answered or dropped (a killed sender's bytes already
   * on their way included: loopback has them in the proxy's socket by the time the sender is dead).
   */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const upstream = new URL(target);
  let armed: { at: HoldAt; method?: string; resolve: (held: Held) => void } | undefined;
  let writes = 0;
  let pending = 0;
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

  const reply = (res: ServerResponse, answer: { status: number; headers: IncomingMessage['headers']; body: Buffer }, done: () => void) => {
    done();
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
    pending++;
    let counted = true;
    const done = () => {
      if (counted) pending--;
      counted = false;
    };
    let ended = false;
    // A sender gone before its request arrived whole: nothing of it goes on.
    req.on('close', () => {
      if (!ended) done();
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      ended = true;
      const body = Buffer.concat(chunks);
      const write = WRITES.has(req.method ?? 'GET');
      if (write) writes++;
      const hold = (armed?.method === undefined ? write : armed.method === req.method) ? armed : undefined;
      if (hold) armed = undefined;
      const drop = (): void => {
        done();
        req.socket.destroy();
      };
      if (!hold || hold.at === 'none') {
        pass(req, body).then((answer) => reply(res, answer, done), drop);
        return;
      }
      if (hold.at === 'arrival') {
        hold.resolve({
          forward: () => pass(req, body).then((answer) => reply(res, answer, done), drop),
          drop,
          release: () => undefined,
        });
        return;
      }
      pass(req, body).then((answer) => {
        hold.resolve({ forward: async () => undefined, drop, release: () => reply(res, answer, done) });
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
    hold: (at, method) => ({ held: new Promise<Held>((resolve) => (armed = { at, ...(method ? { method } : {}), resolve })) }),
    writesSeen: () => writes,
    idle: async () => {
      for (let turns = 0; turns < 3 || pending > 0; turns++) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * When a sender is killed: at a random time after the yes, with the write arrived at the API (then
 * taken by it all the same, or not), with the API's answer held, or just after it went back (while
 * the outcome is being written down).
 */
export const MOMENTS = ['after-yes', 'arrived-taken', 'arrived-dropped', 'answer-held', 'answer-released'] as const;
export type Moment = (typeof MOMENTS)[number];

/**
 * Starts the confirmed write (`send`) and calls `kill` at `moment`; once it returns, what the API
 * did with the write is settled. Answers the moment as a test names it (with its delay).
 */
export async function killAtMoment(proxy: HoldingProxy, send: () => Promise<unknown>, kill: () => Promise<void>, moment: Moment, rng: Seeded): Promise<string> {
  const at = moment === 'after-yes' ? 'none' : moment.startsWith('arrived') ? 'arrival' : 'answer';
  const { held } = proxy.hold(at);
  const answer = send().catch((error: unknown) => error);
  let hold: Held | undefined;
  let detail: string = moment;
  if (moment === 'after-yes') {
    const delay = rng.int(160);
    detail += ` ${delay} ms`;
    await Promise.race([new Promise((resolve) => setTimeout(resolve, delay)), answer]);
  } else {
    hold = await held;
    if (moment === 'answer-released') {
      hold.release();
      const delay = rng.int(6);
      detail += ` ${delay} ms`;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  await kill();
  if (moment === 'arrived-taken') await hold?.forward();
  if (moment === 'arrived-dropped' || moment === 'answer-held') hold?.drop();
  await answer;
  await proxy.idle();
  // A write that did not reach the proxy before the kill is not held: nothing is left armed for the next.
  proxy.hold('none');
  return detail;
}

/** The sandbox behind a holding proxy, and a scratch folder, for one test file (its own hooks): read `sandbox` and `proxy` in tests. */
export function holdingSandboxPerFile(prefix: string): { readonly sandbox: Sandbox; readonly proxy: HoldingProxy; readonly root: string } {
  const rig = { root: mkdtempSync(join(tmpdir(), prefix)) } as { sandbox: Sandbox; proxy: HoldingProxy; root: string };
  beforeAll(async () => {
    rig.sandbox = await startSandbox();
    rig.proxy = await startHoldingProxy(rig.sandbox.baseUrl);
  });
  afterAll(async () => {
    await rig.proxy?.close();
    await rig.sandbox?.close();
    rmSync(rig.root, { recursive: true, force: true });
  });
  return rig;
}

/** Kills a launched server's process (SIGKILL) and waits until its transport has closed. */
export async function killServer(server: LaunchedServer): Promise<void> {
  const pid = server.transport.pid;
  if (pid === null) return;
  const before = server.transport.onclose;
  const exited = new Promise<void>((resolve) => {
    server.transport.onclose = () => {
      before?.();
      resolve();
    };
  });
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await exited;
}
