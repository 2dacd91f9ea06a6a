// Two replicas of the built service (two processes) sharing a real redis-server: a confirmation
// issued on one is honoured once on the other and never again on either, even when fifty
// redemptions of it race across both. Counted on the sandbox's log of what it carried out; the
// operation is a WhatsApp send, which the sandbox carries out (and logs) every time it is asked.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { requestsAtApi, structuredOf, textOf, until } from './helpers.js';
import { makeCertificates, startRedis, type RedisServer } from './redis-server.js';
import { launchService, modernClient, stopService } from './service-process.js';

const SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
const RACERS = 50;

interface Replica {
  url: string;
  child: ChildProcess;
  stderr: string[];
}

let sandbox: Sandbox;
let redis: RedisServer;
const replicas: Replica[] = [];
const clients: ModernClient[] = [];

async function replica(): Promise<Replica> {
  const started = launchService({
    ENGAGE_BASE_URL: sandbox.baseUrl,
    ENGAGE_REDIS_URL: redis.url,
    ENGAGE_STATE_SECRET: SECRET,
    ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY: String(RACERS * 2),
  });
  const one = { url: await started.url, child: started.child, stderr: started.stderr };
  replicas.push(one);
  return one;
}

/** A 2026-07-28 client of one replica; with elicitation declared but answered by the test itself (no auto-fulfil). */
async function client(on: Replica, elicitation = false): Promise<ModernClient> {
  const options = elicitation ? { capabilities: { elicitation: {} }, inputRequired: { autoFulfill: false } } : {};
  const made = await modernClient(on.url, sandbox.keys.full, { info: { name: 'replicas', version: '0' }, options });
  clients.push(made);
  return made;
}

const carried = () => sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send').length;
const call = (on: ModernClient, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  on.callTool(
    { name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', ...args }, ...extra } as never,
    { allowInputRequired: true } as never,
  ) as Promise<Record<string, any>>;
const targets = ['Halo', 'Promo', 'Salam', 'Terima kasih'].map((message) => ({ msisdn: '081234567890', message }));

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  await Promise.all([replica(), replica()]);
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((each) => each.close()));
  await Promise.all(replicas.map(({ child }) => stopService(child)));
  await redis?.stop();
  await sandbox?.close();
});

describe('two replicas on one Redis', () => {
  it('a token issued on replica A runs once on replica B, and is refused on A afterwards', async () => {
    const [a, b] = [await client(replicas[0]!), await client(replicas[1]!)];
    const params = targets[0];
    const before = carried();
    const preview = await call(a, { params });
    expect(structuredOf(preview as never).outcome).toBe('preview');
    const token = structuredOf(preview as never).confirmationToken as string;
    const run = await call(b, { params, confirmationToken: token });
    expect(run.isError, textOf(run as never)).toBeFalsy();
    expect(carried()).toBe(before + 1);
    const again = await call(a, { params, confirmationToken: token });
    expect(again.isError).toBe(true);
    expect(textOf(again as never)).toMatch(/already used/);
    expect(carried()).toBe(before + 1);
  });

  it(`${RACERS} concurrent redemptions of one token across both replicas run exactly one write`, async () => {
    const pool = await Promise.all(Array.from({ length: 10 }, (_, index) => client(replicas[index % 2]!)));
    const params = targets[1];
    const before = carried();
    const token = structuredOf((await call(pool[0]!, { params })) as never).confirmationToken as string;
    const results = await Promise.all(Array.from({ length: RACERS }, (_, index) => call(pool[index % pool.length]!, { params, confirmationToken: token })));
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    // The others are refused: the token is spent, or (on the winner's replica, while its send is
    // out) the same write is still being sent.
    expect(results.filter((result) => result.isError && /already used|is still being sent/.test(textOf(result as never)))).toHaveLength(RACERS - 1);
    expect(carried()).toBe(before + 1);
  });

  it(`a requestState issued on A runs once on B; ${RACERS} racing redemptions of another run one write`, async () => {
    const [a, b] = [await client(replicas[0]!, true), await client(replicas[1]!, true)];
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    const params = targets[2];
    const before = carried();
    const asked = await call(a, { params });
    expect(asked.resultType, JSON.stringify(asked)).toBe('input_required');
    const state = asked.requestState as string;
    const run = await call(b, { params }, { inputResponses: yes, requestState: state });
    expect(run.isError, textOf(run as never)).toBeFalsy();
    expect(carried()).toBe(before + 1);
    const replay = await call(a, { params }, { inputResponses: yes, requestState: state });
    expect(replay.isError).toBe(true);
    expect(textOf(replay as never)).toMatch(/requestState was already used/);
    expect(carried()).toBe(before + 1);

    const raced = targets[3];
    const fresh = (await call(b, { params: raced })).requestState as string;
    const results = await Promise.all(
      Array.from({ length: RACERS }, (_, index) => call(index % 2 ? a : b, { params: raced }, { inputResponses: yes, requestState: fresh })),
    );
    expect(results.filter((result) => !result.isError && result.resultType !== 'input_required')).toHaveLength(1);
    expect(carried()).toBe(before + 2);
  });

  it('a send still at the API on A: B names the replicas, not "this server", and sends nothing', async () => {
    const [a, b] = [await client(replicas[0]!), await client(replicas[1]!)];
    const params = { msisdn: '081234567891', message: 'Pesanan dikirim' };
    const before = carried();
    const sentBefore = requestsAtApi(sandbox, 'channel.whatsapp.send');
    const [tokenA, tokenB] = await Promise.all([a, b].map(async (on) => structuredOf((await call(on, { params })) as never).confirmationToken as string));
    sandbox.injectFault({ kind: 'delay', delayMs: 1500, operationId: 'channel.whatsapp.send' });
    const slow = call(a, { params, confirmationToken: tokenA });
    // B is asked once A's send is at the API (held there 1.5 s), not after a fixed wait.
    await until("A's send at the API", () => requestsAtApi(sandbox, 'channel.whatsapp.send') === sentBefore + 1);
    const racing = await call(b, { params, confirmationToken: tokenB });
    expect(racing.isError).toBe(true);
    expect(textOf(racing as never)).toMatch(/(is still being sent|was sent) by a replica of this service \(this one or another\)/);
    expect((await slow).isError, textOf((await slow) as never)).toBeFalsy();
    const warned = await call(b, { params });
    expect(textOf(warned as never)).toMatch(/Warning: a replica of this service \(this one or another\) already sent exactly this channel\.whatsapp\.send at /);
    expect(carried()).toBe(before + 1);
  });

  it('refuses to start with Redis but without ENGAGE_STATE_SECRET, or with one shorter than 32 bytes', async () => {
    for (const secret of [undefined, 'short-secret-31-bytes-long-xxxx']) {
      const started = launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_REDIS_URL: redis.url, ...(secret ? { ENGAGE_STATE_SECRET: secret } : {}) });
      expect(await started.exit).toBe(2);
      expect(started.stderr.join('')).toMatch(/ENGAGE_STATE_SECRET/);
    }
  });
});

describe('the built CLI on a managed-style Redis: rediss:// and an ACL user', () => {
  const password = 'acl-password-that-must-never-be-logged';
  let dir: string;
  let tlsRedis: RedisServer;
  let caFile: string;
  const url = (secret: string) => `rediss://engage:${secret}@127.0.0.1:${tlsRedis.port}`;
  const start = (env: Record<string, string>) => launchService({ ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_STATE_SECRET: SECRET, ...env });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'engage-cli-tls-'));
    const tls = makeCertificates(dir);
    caFile = tls.caFile;
    tlsRedis = await startRedis({ tls, users: [`engage on >${password} ~engage:* &* +@all`] });
  });
  afterAll(async () => {
    await tlsRedis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts and serves with the CA in ENGAGE_REDIS_CA_FILE; the password is never logged', async () => {
    const started = start({ ENGAGE_REDIS_URL: url(password), ENGAGE_REDIS_CA_FILE: caFile });
    const on = { url: await started.url, child: started.child, stderr: started.stderr };
    replicas.push(on);
    const preview = await call(await client(on), { params: targets[0] });
    expect(structuredOf(preview as never).outcome).toBe('preview');
    expect(started.stderr.join('')).not.toContain(password);
  });

  it('refuses to start, saying why, with a wrong password or a certificate it does not trust', async () => {
    const cases: Array<{ env: Record<string, string>; says: RegExp }> = [
      { env: { ENGAGE_REDIS_URL: url(`not-${password}`), ENGAGE_REDIS_CA_FILE: caFile }, says: /WRONGPASS\): check the user and password in ENGAGE_REDIS_URL/ },
      { env: { ENGAGE_REDIS_URL: url(password) }, says: /TLS certificate that is not trusted .*ENGAGE_REDIS_CA_FILE/ },
      { env: { ENGAGE_REDIS_URL: url(password), ENGAGE_REDIS_CA_FILE: join(dir, 'missing.pem') }, says: /ENGAGE_REDIS_CA_FILE cannot be read \(ENOENT\)/ },
    ];
    for (const { env, says } of cases) {
      const started = start(env);
      expect(await started.exit).toBe(2);
      const stderr = started.stderr.join('');
      expect(stderr).toMatch(says);
      expect(stderr).toMatch(/"level":"error","msg":"not started: /);
      expect(stderr).not.toContain(password);
    }
  });
});
