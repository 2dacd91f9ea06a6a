// Never twice at the socket: a failure counts as "nothing was sent" only when no byte of the
// request reached a socket. The faults are injected into this process's own sockets (undici's
// diagnostics channel names the socket a request is written to; net.connect is wrapped for a
// connection that never opens), and what counts is what the sandbox saw and carried out.
import net from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
const undo: Array<() => void> = [];
afterEach(() => {
  for (const step of undo.splice(0)) step();
});

/** The error a kernel gives a socket whose peer became unreachable (retransmissions given up), as Node reports it. */
function hostUnreachable(syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${syscall} EHOSTUNREACH`), { code: 'EHOSTUNREACH', errno: -113, syscall });
}

const sent = (operationId: string) => sandbox.requests().filter((request) => request.operationId === operationId).length;
const draftId = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!._id;

/** Resolves once the check holds; the sandbox runs in this process, so this waits on its event loop turns, not on a clock. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** undici frees a connection for its next request on the turn after the answer: the next request then reuses it. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Every request undici writes, with the socket it writes it to. */
function watchWrites(onWrite: (write: { method: string; socket: net.Socket }) => void): void {
  const listener = (message: unknown) => {
    const { request, socket } = message as { request: { method: string }; socket: net.Socket };
    onWrite({ method: request.method, socket });
  };
  subscribe('undici:client:sendHeaders', listener);
  undo.push(() => unsubscribe('undici:client:sendHeaders', listener));
}

it('a write on a reused keep-alive socket that then fails with EHOSTUNREACH has an unknown outcome and reaches the API once', async () => {
  const server = await serve('campaign.send', { env: { ENGAGE_CONFIRM: 'none' } });
  const used = new WeakSet<net.Socket>();
  let reused: net.Socket | undefined;
  watchWrites(({ method, socket }) => {
    if (method === 'POST' && used.has(socket)) reused = socket;
    used.add(socket);
  });
  expect((await server.call('campaign.list')).isError).toBeFalsy();
  await nextTurn();
  // The API takes the send and is slow to answer; meanwhile the path to it breaks.
  sandbox.injectFault({ kind: 'delay', operationId: 'campaign.send', delayMs: 5_000 });
  const answer = server.call('campaign.send', { id: draftId() });
  await until(() => sent('campaign.send') === 1);
  expect(reused, 'the send went out on the socket the list used').toBeDefined();
  reused!.destroy(hostUnreachable('read'));
  const result = await answer;

  expect(sent('campaign.send')).toBe(1);
  expect(result.isError).toBe(true);
  expect(structuredOf(result).outcome).toBe('unknown');
  expect(textOf(result)).toMatch(/The outcome is unknown: campaign\.send may have been carried out, so it was not repeated/);
  expect(textOf(result)).not.toMatch(/Nothing was sent/);
});

it('a read on a reused socket that fails with EHOSTUNREACH is repeated, and answers', async () => {
  const server = await serve('campaign.list');
  const used = new WeakSet<net.Socket>();
  let broken = false;
  watchWrites(({ socket }) => {
    if (used.has(socket) && !broken) {
      broken = true;
      // Written, then the path breaks before the answer.
      setImmediate(() => socket.destroy(hostUnreachable('read')));
    }
    used.add(socket);
  });
  expect((await server.call('campaign.list')).isError).toBeFalsy();
  await nextTurn();
  sandbox.injectFault({ kind: 'delay', operationId: 'campaign.list', delayMs: 5_000 });
  const result = await server.call('campaign.list');
  expect(broken).toBe(true);
  expect(result.isError, textOf(result)).toBeFalsy();
});

it('a connection that never opened (EHOSTUNREACH on connect) sent nothing: the write is sent on the next attempt, once', async () => {
  const server = await serve('campaign.send', { env: { ENGAGE_CONFIRM: 'none' } });
  const connect = net.connect;
  let refused = 0;
  // The first connection to the sandbox fails while opening, as an unreachable host's does.
  (net as { connect: unknown }).connect = (...args: Parameters<typeof net.connect>) => {
    const options = args[0] as { port?: number | string };
    if (refused > 0 || Number(options.port) !== sandbox.port) return connect(...args);
    refused++;
    const socket = new net.Socket();
    process.nextTick(() => socket.destroy(hostUnreachable('connect')));
    return socket;
  };
  undo.push(() => void ((net as { connect: unknown }).connect = connect));

  const result = await server.call('campaign.send', { id: draftId() });
  expect(refused).toBe(1);
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(structuredOf(result).outcome).toBe('done');
  expect(sent('campaign.send')).toBe(1);
  expect(countCarriedOut(sandbox, 'campaign.send')).toBe(1);
});
