// The guardrails in remote mode: two replicas of the built service (two processes) sharing a real
// redis-server, against the sandbox (which counts deliveries). A daily cap holds across both, an
// idempotency key answers once across both, the audit record of each key fingerprint holds every
// write once and verifies from an export, and a stopped Redis refuses capped writes.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { keyFingerprint } from '../shared/src/call/confirmations.js';
import { ALL_SCOPES, startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { launchService, modernClient, stopService } from './service-process.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService } from '../packages/http/src/service.js';

const run = promisify(execFile);
const SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
const REDIS_CLI = process.env.ENGAGE_TEST_REDIS_CLI ?? '/usr/bin/redis-cli';
const AUDIT_BIN = join('packages', 'audit', 'bin', 'engage-mcp-audit.js');

interface Replica {
  url: string;
  child: ChildProcess;
  stderr: string[];
}

let sandbox: Sandbox;
let redis: RedisServer;
let dir: string;
const replicas: Replica[] = [];
const clients: ModernClient[] = [];

async function replica(): Promise<Replica> {
  const started = launchService({
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: SECRET,
    ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY: '40',
    // Replies need a person's yes, WhatsApp sends do not; every message counts toward the daily cap.
    ENGAGE_CONFIRM: 'none,inbox.ticket.reply',
    ENGAGE_CAP_MESSAGES_PER_DAY: '3',
    ENGAGE_TIMEZONE: 'Asia/Jakarta',
  });
  const one = { url: await started.url, child: started.child, stderr: started.stderr };
  replicas.push(one);
  return one;
}

/** A 2026-07-28 client of one replica for `domain`, with `key`. */
async function client(on: Replica, key: string, domain = 'channel'): Promise<ModernClient> {
  const made = await modernClient(on.url, key, { domain, info: { name: 'guardrails-remote', version: '1.2.3' } });
  clients.push(made);
  return made;
}

/** One client per replica for a key. */
const bothReplicas = (key: string, domain = 'channel') => Promise.all(replicas.map((each) => client(each, key, domain)));

const send = (on: ModernClient, params: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  on.callTool({ name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', params, ...extra } }) as Promise<Record<string, any>>;
const delivered = (message: RegExp) =>
  sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && message.test(String(entry.params.message))).length;

/** One key's audit record, exported as the README says: redis-cli LRANGE of its list, one JSON line each. */
async function exportAudit(key: string): Promise<string> {
  const list = `engage:audit:{${keyFingerprint(key).slice(0, 16)}}`;
  const { stdout } = await run(REDIS_CLI, ['-u', redis.url, '--raw', 'LRANGE', list, '0', '-1']);
  const file = join(dir, `audit-${list.slice(14, 22).replace(/\W/g, '_')}.jsonl`);
  writeFileSync(file, stdout);
  return file;
}

const verify = (file: string) =>
  run(process.execPath, [AUDIT_BIN, 'verify', '--remote', file], { env: { PATH: process.env.PATH ?? '', ENGAGE_STATE_SECRET: SECRET } }).catch(
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
const entriesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, any>);

const capKey = () => sandbox.createKey(ALL_SCOPES, { label: 'cap' });
let keys: { cap: string; idempotent: string; confirmed: string };

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'engage-guardrails-remote-'));
  keys = { cap: capKey(), idempotent: capKey(), confirmed: capKey() };
  await Promise.all([replica(), replica()]);
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((each) => each.close()));
  await Promise.all(replicas.map(({ child }) => stopService(child)));
  await redis?.stop();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('guardrails across two replicas on one Redis', () => {
  it('a daily cap of 3 lets exactly 3 of 20 concurrent sends through, spread over both replicas', async () => {
    const [a, b] = await bothReplicas(keys.cap);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => send(index % 2 ? a! : b!, { msisdn: `0812777720${String(index).padStart(2, '0')}`, message: `Kuota ${index}` })),
    );
    expect(results.filter((result) => !result.isError)).toHaveLength(3);
    expect(delivered(/^Kuota /)).toBe(3);
    const refusals = results.filter((result) => result.isError);
    expect(refusals).toHaveLength(17);
    for (const refusal of refusals) {
      expect(structuredOf(refusal as never).outcome).toBe('refused');
      expect(textOf(refusal as never)).toMatch(/3 of the 3 messages ENGAGE_CAP_MESSAGES_PER_DAY allows per day .*nothing was sent/);
    }
  });

  it('the same idempotency key sent 5 times across both replicas delivers once and answers the first outcome; other params are refused', async () => {
    const [a, b] = await bothReplicas(keys.idempotent);
    const params = { msisdn: '081277773001', message: 'Sekali saja' };
    const results = await Promise.all(Array.from({ length: 5 }, (_, index) => send(index % 2 ? a! : b!, params, { idempotencyKey: 'order-4711' })));
    expect(delivered(/^Sekali saja$/)).toBe(1);
    const first = results.find((result) => !/nothing was sent again/.test(textOf(result as never)))!;
    expect(structuredOf(first as never).outcome, textOf(first as never)).toBe('done');
    for (const result of results) {
      expect(structuredOf(result as never).outcome).toBe('done');
      expect(structuredOf(result as never).data).toEqual(structuredOf(first as never).data);
    }
    expect(results.filter((result) => /first used at .*nothing was sent again/.test(textOf(result as never)))).toHaveLength(4);

    const changed = await send(a!, { ...params, message: 'Lain' }, { idempotencyKey: 'order-4711' });
    expect(changed.isError).toBe(true);
    expect(textOf(changed as never)).toMatch(/idempotencyKey was used at .* with other params; nothing was sent/);
    expect(delivered(/^(Sekali saja|Lain)$/)).toBe(1);
  });

  it('a reply confirmed by a token from the other replica is sent once and counted', async () => {
    const [a, b] = await bothReplicas(keys.confirmed, 'inbox');
    const params = { ticketID: 'TCK-1001', message: 'Balasan dari replika' };
    const call = (on: ModernClient, extra: Record<string, unknown> = {}) =>
      on.callTool({ name: 'inbox_action', arguments: { operationId: 'inbox.ticket.reply', params, ...extra } }) as Promise<Record<string, any>>;
    const before = sandbox.carriedOut().filter((entry) => entry.operationId === 'inbox.ticket.reply').length;
    const preview = await call(a!);
    expect(structuredOf(preview as never).outcome).toBe('preview');
    const sent = await call(b!, { confirmationToken: structuredOf(preview as never).confirmationToken });
    expect(structuredOf(sent as never).outcome, textOf(sent as never)).toBe('done');
    expect(sandbox.carriedOut().filter((entry) => entry.operationId === 'inbox.ticket.reply').length - before).toBe(1);
  });

  it("each key's audit record holds every write once with its confirmation path and outcome, and verifies from its export", async () => {
    const cap = entriesOf(await exportAudit(keys.cap));
    expect(cap.filter((entry) => entry.outcome === 'done')).toHaveLength(3);
    expect(cap.filter((entry) => entry.outcome === 'refused')).toHaveLength(17);
    expect(new Set(cap.map((entry) => entry.confirmation))).toEqual(new Set(['not needed']));
    expect(new Set(cap.map((entry) => entry.key))).toEqual(new Set([keyFingerprint(keys.cap).slice(0, 16)]));
    expect(cap[0]).toMatchObject({
      client: { name: 'guardrails-remote', version: '1.2.3' },
      server: 'engage-mcp-channel',
      operationId: 'channel.whatsapp.send',
    });

    const idempotent = entriesOf(await exportAudit(keys.idempotent));
    expect(idempotent.map((entry) => entry.outcome).sort()).toEqual(['done', 'refused', 'repeated', 'repeated', 'repeated', 'repeated']);
    // The key is kept as a keyed digest, the same on both replicas, never as the model's text.
    expect(new Set(idempotent.map((entry) => entry.idempotencyKeyDigest)).size).toBe(1);
    expect(idempotent[0]!.idempotencyKeyDigest).toMatch(/^[\w-]{32}$/);
    expect(JSON.stringify(idempotent)).not.toContain('order-4711');

    const confirmedFile = await exportAudit(keys.confirmed);
    expect(entriesOf(confirmedFile)).toMatchObject([{ operationId: 'inbox.ticket.reply', confirmation: 'token', outcome: 'done' }]);

    const all = JSON.stringify([cap, idempotent, entriesOf(confirmedFile)]);
    expect(all).not.toMatch(/Kuota|Sekali saja|Balasan|0812777|eng_|sandbox/i);
    for (const key of Object.values(keys)) expect(all).not.toContain(key);

    for (const file of [await exportAudit(keys.cap), await exportAudit(keys.idempotent), confirmedFile]) {
      expect((await verify(file)).stdout).toMatch(/: \d+ lines?, the chain is intact; every line is of key [\w-]{16}\./);
    }
    const capFile = await exportAudit(keys.cap);
    const lines = readFileSync(capFile, 'utf8').trim().split('\n');
    writeFileSync(capFile, `${lines.map((line, index) => (index === 4 ? line.replace('"server":"engage-mcp-', '"server":"engage-mcX-') : line)).join('\n')}\n`);
    expect(await verify(capFile)).toMatchObject({ code: 1, stdout: expect.stringContaining('line 5: its content was changed') });
  });

  it('a stopped Redis refuses capped writes with a clear answer and sends nothing; reads still work', async () => {
    const [a, b] = await bothReplicas(sandbox.createKey(ALL_SCOPES, { label: 'outage' }));
    await redis.stop();
    for (const on of [a!, b!]) {
      const refused = await send(on, { msisdn: '081277774001', message: 'Saat Redis mati' });
      expect(refused.isError).toBe(true);
      expect(structuredOf(refused as never).outcome).toBe('refused');
      expect(textOf(refused as never)).toMatch(
        /shared store .* did not answer, so this write's send caps .* could not be checked: nothing was sent\. Ask again/,
      );
      const read = (await on.callTool({ name: 'channel_read', arguments: { operationId: 'channel.list', params: {} } })) as Record<string, any>;
      expect(read.isError, textOf(read as never)).toBeFalsy();
    }
    expect(delivered(/^Saat Redis mati$/)).toBe(0);
  });
});

describe('one replica without Redis', () => {
  it("keeps one store for every domain: a key's daily cap counts its messages whichever domain sends them", async () => {
    const env = { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_CONFIRM: 'none', ENGAGE_CAP_MESSAGES_PER_DAY: '1' };
    const service = await startService({ env, catalogs: CATALOGS, port: 0, writeLog: () => {} });
    try {
      const key = sandbox.createKey(ALL_SCOPES, { label: 'one-replica' });
      const on = { url: service.url, child: undefined as never, stderr: [] };
      const whatsapp = await send(await client(on, key), { msisdn: '081277775001', message: 'Satu replika' });
      expect(structuredOf(whatsapp as never).outcome, textOf(whatsapp as never)).toBe('done');
      const inbox = await client(on, key, 'inbox');
      const reply = (await inbox.callTool({
        name: 'inbox_action',
        arguments: { operationId: 'inbox.ticket.reply', params: { ticketID: 'TCK-1002', message: 'Satu replika juga' } },
      })) as Record<string, any>;
      expect(reply.isError).toBe(true);
      expect(textOf(reply as never)).toMatch(/1 of the 1 messages ENGAGE_CAP_MESSAGES_PER_DAY allows per day .*nothing was sent/);
    } finally {
      await service.close();
    }
  });
});
