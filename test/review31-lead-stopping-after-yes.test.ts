// A stdio server told to stop takes no new write (register.ts answers serverStopping), but a write
// it had taken before the signal and was still asking the person about (a 2025 session's
// elicitation/create) went on to the API once the person said yes: sent while the server was
// stopping, and cut off at the API by the exit 10 s later if the API was slow, its outcome never
// noted. Now a stopping server sends nothing new at the claim either: the write is refused, the
// model told nothing was sent and to ask again once the host has started the server again. And a
// write whose preview was still being read when the signal came is refused before its question,
// so the person is not asked about a write that would not be sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, until } from './helpers.js';
import { lineServer } from './helpers/line-server.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
let stateDir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  stateDir = mkdtempSync(join(tmpdir(), 'engage-stopping-yes-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

/** A built server over stdio (2025 era, a host that can ask), spoken to line by line; `onAsk` answers its questions. */
function askingServer(onAsk: (question: Record<string, any>) => Promise<unknown>, domain = 'channel') {
  const env = {
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_API_KEY: sandbox.keys.full,
    ENGAGE_CONFIRM: 'all',
    ENGAGE_LOG_LEVEL: 'info',
    ENGAGE_STATE_DIR: stateDir,
  };
  return lineServer(domain, env, onAsk);
}

it('a stop signal while the person is asked: their yes after it sends nothing, and the model is told to ask again after the restart', async () => {
  const server = askingServer(async () => {
    server.child.kill('SIGTERM');
    await until('the server stopping', () => server.log().includes('shutting down'));
    return { action: 'accept', content: { confirm: true } };
  });
  await server.open();
  const before = requestsAtApi(sandbox, SEND);
  const sent = await server.request('tools/call', {
    name: 'channel_action',
    arguments: { operationId: SEND, params: { msisdn: '081234567890', message: 'yes given as the server stops' } },
  });
  await server.exited;
  expect(requestsAtApi(sandbox, SEND) - before, JSON.stringify(sent.result.content)).toBe(0);
  expect(sent.result.isError).toBe(true);
  expect(sent.result.structuredContent).toMatchObject({ operationId: SEND, outcome: 'refused' });
  expect(sent.result.content[0].text).toMatch(/stopping.*nothing was sent.*started it again/is);
}, 30_000);

it('a stop signal while the preview is read: the person is not asked about a write that would not be sent', async () => {
  let asked = false;
  const server = askingServer(async () => {
    asked = true;
    return { action: 'decline' };
  }, 'inbox');
  await server.open();
  // The preview reads the ticket list; it answers slowly, and the signal comes while it is read.
  sandbox.injectFault({ kind: 'delay', operationId: 'inbox.ticket.list', delayMs: 1_500 });
  const listed = requestsAtApi(sandbox, 'inbox.ticket.list');
  const closing = server.request('tools/call', { name: 'inbox_action', arguments: { operationId: 'inbox.ticket.close', params: { ticketID: 'T-31' } } });
  await until('the preview reading the ticket list', () => requestsAtApi(sandbox, 'inbox.ticket.list') > listed);
  server.child.kill('SIGTERM');
  const closed = await closing;
  await server.exited;
  expect(asked, JSON.stringify(closed.result.content)).toBe(false);
  expect(closed.result.structuredContent).toMatchObject({ operationId: 'inbox.ticket.close', outcome: 'refused' });
  expect(closed.result.content[0].text).toMatch(/stopping.*nothing was sent.*started it again/is);
}, 30_000);
