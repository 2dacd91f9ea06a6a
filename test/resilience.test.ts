// The HTTP core against the sandbox's injected faults. What counts is what the sandbox saw and
// carried out, never what the server says about itself.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Fault, type Sandbox } from '../packages/sandbox/src/index.js';
import { ALL_OPERATIONS, countCarriedOut, domainOf, inProcess, textOf, toolOf, type ClientKind, type InProcess, WAIT_UNDER_LOAD } from './helpers.js';
import { keyScanner } from './leaks.js';

let sandbox: Sandbox;
const open: InProcess[] = [];
/** Every answer and log line of this file, scanned for the key at the end. */
const everything: string[] = [];
/** Every key these tests used, looked for in every form (see leaks.ts). */
const keys = keyScanner();
const figures = { faults: 0, hostileIds: 0 };

beforeEach(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000 });
  keys.add(...Object.values(sandbox.keys));
});
afterEach(async () => {
  for (const server of open) everything.push(...server.logs);
  await Promise.all(open.splice(0).map((server) => server.close()));
  await sandbox.close();
});

async function serve(operationId: string, env: Record<string, string> = {}, kind: ClientKind = 'v1') {
  if (env.ENGAGE_API_KEY) keys.add(env.ENGAGE_API_KEY);
  const server = await inProcess(domainOf(operationId), sandbox, { kind, env: { ENGAGE_CONFIRM: 'none', ...env } });
  open.push(server);
  return server;
}

async function call(
  server: InProcess,
  operationId: string,
  params?: Record<string, unknown>,
  options?: Parameters<InProcess['client']['callTool']>[2],
): Promise<CallToolResult> {
  const result = (await server.client.callTool(
    { name: toolOf(operationId), arguments: { operationId, ...(params ? { params } : {}) } },
    undefined,
    options,
  )) as CallToolResult;
  everything.push(textOf(result), JSON.stringify(result.structuredContent ?? null));
  return result;
}

function inject(fault: Fault) {
  figures.faults += 1;
  sandbox.injectFault(fault);
}

/** The 2025 client most hosts ship, and a client pinned to 2026-07-28. */
const ERAS = ['v1', 'v2-modern'] as const;
const sent = (operationId: string) => sandbox.requests().filter((request) => request.operationId === operationId).length;
const draftId = () => sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft')!._id;

describe('429 and pacing', () => {
  it.each(ERAS)('waits Retry-After and repeats the same request; the send happens once, and progress is reported (%s)', async (kind) => {
    const server = await serve('campaign.send', {}, kind);
    inject({ kind: 'rate-limit', operationId: 'campaign.send', retryAfter: '1' });
    const progress: unknown[] = [];
    const result = await call(server, 'campaign.send', { id: draftId() }, { onprogress: (update) => progress.push(update) });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sent('campaign.send')).toBe(2);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(1);
    expect(progress.length).toBeGreaterThan(0);
    expect(JSON.stringify(progress)).toMatch(/rate limit/);
  });

  it('tolerates a Retry-After that is an HTTP date or garbage', async () => {
    const server = await serve('contact.list');
    inject({ kind: 'rate-limit', operationId: 'contact.list', retryAfter: 'soon' });
    inject({ kind: 'rate-limit', operationId: 'contact.list', retryAfter: new Date(Date.now() + 1000).toUTCString() });
    const result = await call(server, 'contact.list');
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sent('contact.list')).toBe(3);
  });

  it('past ENGAGE_MAX_RETRY_WAIT_S, answers when to try again and sends nothing more', async () => {
    const server = await serve('campaign.send', { ENGAGE_MAX_RETRY_WAIT_S: '5' });
    inject({ kind: 'rate-limit', operationId: 'campaign.send', retryAfter: '120' });
    const result = await call(server, 'campaign.send', { id: draftId() });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/rate limit.*not carried out.*Try again in 120 seconds/);
    expect(sent('campaign.send')).toBe(1);
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(0);
  });

  it('repeats a bounded number of times', async () => {
    const server = await serve('contact.list');
    inject({ kind: 'rate-limit', operationId: 'contact.list', retryAfter: '0', times: 10 });
    const result = await call(server, 'contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Try again in/);
    expect(sent('contact.list')).toBe(4);
  });

  it.each(ERAS)('MCP cancellation stops a rate-limit wait (%s)', async (kind) => {
    const server = await serve('contact.list', { ENGAGE_MAX_RETRY_WAIT_S: '60' }, kind);
    inject({ kind: 'rate-limit', operationId: 'contact.list', retryAfter: '30' });
    const controller = new AbortController();
    const pending = call(server, 'contact.list', undefined, { signal: controller.signal });
    await expect.poll(() => sent('contact.list'), WAIT_UNDER_LOAD).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => server.logs.join('\n'), WAIT_UNDER_LOAD).toMatch(/contact\.list failed: UpstreamError: cancelled/);
    expect(sent('contact.list')).toBe(1);
  });

  it('paces a burst of concurrent calls instead of stampeding into 429s', async () => {
    // 600 per minute is one token every 100 ms; the bucket holds 3.
    const key = sandbox.createKey(['contact.read'], { rateLimit: 600, burst: 3 });
    const server = await serve('contact.list', { ENGAGE_API_KEY: key });
    for (let index = 0; index < 3; index++) await call(server, 'contact.list'); // drains the bucket; the server learns it is empty
    const results = await Promise.all(Array.from({ length: 16 }, () => call(server, 'contact.list')));
    expect(results.every((result) => !result.isError)).toBe(true);
    const limited = sandbox.requests().filter((request) => request.status === 429).length;
    expect(limited).toBeLessThanOrEqual(2);
  });
});

describe('retries and unknown outcomes', () => {
  it('retries a safe operation after 503s and resets, with backoff', async () => {
    const server = await serve('contact.list');
    inject({ kind: 'status', status: 503, operationId: 'contact.list' });
    inject({ kind: 'reset-before', operationId: 'contact.list' });
    const result = await call(server, 'contact.list');
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(sent('contact.list')).toBe(3);
  });

  it('gives up on a safe operation after a few tries, and says so', async () => {
    const server = await serve('contact.list');
    inject({ kind: 'status', status: 502, operationId: 'contact.list', times: 5 });
    const result = await call(server, 'contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The API failed with HTTP 502 Bad Gateway\. Try again later/);
    expect(sent('contact.list')).toBe(3);
  });

  it('does not retry a safe operation on other 5xx or 4xx', async () => {
    const server = await serve('contact.list');
    inject({ kind: 'status', status: 500, operationId: 'contact.list' });
    expect((await call(server, 'contact.list')).isError).toBe(true);
    expect(sent('contact.list')).toBe(1);
  });

  const unknownOutcome: Array<[string, Fault, number]> = [
    ['a 5xx after the work', { kind: 'status', status: 503, afterWork: true }, 1],
    ['a reset after the work', { kind: 'reset-after' }, 1],
    ['a reset before the work', { kind: 'reset-before' }, 0],
    ['a timeout while the API works', { kind: 'delay', delayMs: 800 }, 1],
    ['an HTML error page', { kind: 'html', status: 502, afterWork: true }, 1],
    ['a truncated body', { kind: 'truncated' }, 1],
    ['a body that is not the envelope', { kind: 'not-envelope' }, 1],
    ['a slow body', { kind: 'slow-body', delayMs: 3000 }, 1],
  ];
  it.each(unknownOutcome)('never repeats a send after %s, and says the outcome is unknown', async (_, fault, carried) => {
    const server = await serve('campaign.send', { ENGAGE_TIMEOUT_MS: '400' });
    inject({ ...fault, operationId: 'campaign.send' });
    const result = await call(server, 'campaign.send', { id: draftId() });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/outcome is unknown: campaign\.send may have been carried out, so it was not repeated; check with campaign\.progress/);
    expect(textOf(result)).not.toMatch(/<html|nginx|DOCTYPE/i);
    expect(sent('campaign.send')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, fault.kind === 'delay' ? 600 : 0));
    expect(countCarriedOut(sandbox, 'campaign.send')).toBe(carried);
  });

  it('turns bad bodies of safe operations into short, clear errors', async () => {
    const server = await serve('contact.list', { ENGAGE_TIMEOUT_MS: '400' });
    const cases: Array<[Fault, RegExp]> = [
      [{ kind: 'html', status: 200 }, /HTTP 200 OK but its body was an HTML page, not JSON/],
      [{ kind: 'truncated' }, /not valid JSON \(truncated or malformed\)/],
      [{ kind: 'not-envelope' }, /without its \{status, errorCode, data\} envelope/],
      [{ kind: 'html', status: 500 }, /The API failed with HTTP 500/],
    ];
    for (const [fault, message] of cases) {
      inject({ ...fault, operationId: 'contact.list' });
      const result = await call(server, 'contact.list');
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
      expect(textOf(result).length).toBeLessThan(400);
    }
  });

  it('bounds every request by ENGAGE_TIMEOUT_MS, also a slow body, and retries reads within it', async () => {
    const server = await serve('contact.list', { ENGAGE_TIMEOUT_MS: '300' });
    inject({ kind: 'slow-body', delayMs: 5000, operationId: 'contact.list', times: 3 });
    const result = await call(server, 'contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/did not answer within 300 ms/);
    expect(sent('contact.list')).toBe(3);
  });

  it('does not follow redirects: the key stays with the base address', async () => {
    const server = await serve('contact.list');
    inject({ kind: 'redirect', operationId: 'contact.list' });
    const result = await call(server, 'contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/redirect \(HTTP 302 Found\), which is not followed/);
    expect(sandbox.requests()).toHaveLength(1);
  });

  it('says nothing was sent when the API cannot be reached', async () => {
    const server = await inProcess(domainOf('campaign.send'), { baseUrl: 'http://127.0.0.1:9', keys: sandbox.keys }, { env: { ENGAGE_CONFIRM: 'none' } });
    open.push(server);
    const result = await call(server, 'campaign.send', { id: 'abc' });
    expect(textOf(result)).toMatch(/Could not connect to the API.*Nothing was sent/);
  });

  it('explains 401 for expired and revoked keys', async () => {
    for (const key of [sandbox.keys.expired, sandbox.keys.revoked, 'eng_live_made_up']) {
      const server = await serve('contact.list', { ENGAGE_API_KEY: key });
      const result = await call(server, 'contact.list');
      expect(textOf(result)).toMatch(
        /invalid, revoked or expired. Retrying will not help: tell the user, who can create a new key in the tenant console under API key settings/,
      );
    }
  });

  it('uses the Bearer header when asked', async () => {
    const server = await serve('contact.list', { ENGAGE_AUTH_HEADER: 'bearer' });
    expect((await call(server, 'contact.list')).isError).toBeFalsy();
  });
});

// Ids a model might pass, hostile or confused, for every path parameter of the catalog.
const HOSTILE_IDS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E%2F',
  '..%2f..%2f',
  'a/../../campaign',
  '../../campaign/campaigns',
  '/',
  '\\',
  '?x=1',
  '#frag',
  'a\r\nX-Injected: 1',
  'a\nb',
  '\t',
  ' ',
  ' padded ',
  '\u0000',
  '\u202eevil',
  '\u200b',
  'x'.repeat(129),
  'x'.repeat(100_000),
  'stats',
  'status',
  'status/open',
  'import',
  'campaign',
  'analytics',
  'send',
  'cancel',
  'progress',
  'reply',
  'close',
  'whatsapp',
  'templates',
  'history',
  'users',
  'tickets',
  '%',
  '%zz',
  'ȧ',
  '😀',
  'null',
  'undefined',
  '0',
  '-1',
];

describe('hostile ids never reach another route', () => {
  const withPathParams = ALL_OPERATIONS.filter((op) => /\{\w+\}/.test(op.path));
  it.each(withPathParams.map((op) => [op.id, op]))('%s', async (operationId, op) => {
    const server = await serve(operationId);
    const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
    const body = { message: 'tes', name: 'tes' };
    for (const id of HOSTILE_IDS) {
      figures.hostileIds += 1;
      sandbox.clearLogs();
      const params = { ...(op.method === 'POST' || op.method === 'PUT' ? body : {}), ...Object.fromEntries(names.map((name) => [name, id])) };
      if (op.id === 'contact.update') delete (params as Record<string, unknown>).message;
      if (
        op.id === 'campaign.send' ||
        op.id === 'campaign.cancel' ||
        op.id === 'inbox.ticket.close' ||
        op.id === 'product.delete' ||
        op.id === 'contact.delete' ||
        op.id === 'campaign.delete'
      ) {
        delete (params as Record<string, unknown>).message;
        delete (params as Record<string, unknown>).name;
      }
      const result = await call(server, operationId, params);
      for (const request of sandbox.requests()) {
        // Whatever was sent landed on this operation's own route (or on none), never another's.
        expect([op.id, null], `${operationId} with ${JSON.stringify(id).slice(0, 40)} reached ${request.operationId}`).toContain(request.operationId);
      }
      if (sandbox.requests().length === 0) expect(result.isError).toBe(true);
    }
  });
});

describe('the key', () => {
  it('never appears in any answer or log line of these tests', () => {
    const all = everything.join('\n');
    expect(all.length).toBeGreaterThan(1000);
    // Every sandbox key has this shape; each test above ran with its own.
    expect(all).not.toMatch(/eng_live_[0-9a-f]{40}/);
    for (const text of everything) expect(keys.find(text)).toBeUndefined();
  });
});

afterAll(() => {
  process.stderr.write(`resilience figures: ${figures.faults} faults injected, ${figures.hostileIds} hostile ids tried\n`);
});

beforeAll(() => {
  figures.faults = 0;
  figures.hostileIds = 0;
});
