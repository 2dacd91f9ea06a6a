// Review 28b: two replicas of the built remote service on one real Redis, the API behind a proxy
// that can hold the send. The replica a confirmed send goes through is killed (SIGKILL) at a
// seeded moment: a random time after the yes (between the token's claim in Redis and the send,
// among others), the send arrived at the API (taken or not), its answer held, or just after the
// answer came back. The same call is then made on the other replica, in the same protocol era (a
// 2026-07-28 client, or a 2025 client in a session of its own there): the same token, then the
// same write from scratch and its yes. The sandbox's own record says how often the write arrived.
// CHAOS_SEED and CHAOS_ROUNDS replay a run.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf, type TestClient } from './helpers.js';
import { startRedis, type RedisServer } from './redis-server.js';
import { MOMENTS, killAtMoment, startHoldingProxy, type HoldingProxy } from './review28b-holding-proxy.js';
import { seeded } from './seeded.js';
import { launchService, modernClient, stopService, type ServiceProcess } from './service-process.js';

const SEND = 'channel.whatsapp.send';
const SECRET = 'a-shared-state-secret-of-more-than-32-bytes';
const SEED = Number(process.env.CHAOS_SEED ?? 2808);
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 16);

let sandbox: Sandbox;
let proxy: HoldingProxy;
let redis: RedisServer;
const replicas: Array<{ url: string; process: ServiceProcess }> = [];
const clients: Array<{ close(): Promise<unknown> }> = [];

async function replica() {
  const started = launchService({ ENGAGE_BASE_URL: proxy.baseUrl, ENGAGE_REDIS_URL: redis.url, ENGAGE_STATE_SECRET: SECRET, ENGAGE_CONFIRM: 'all' });
  return { url: await started.url, process: started };
}

beforeAll(async () => {
  sandbox = await startSandbox();
  proxy = await startHoldingProxy(sandbox.baseUrl);
  redis = await startRedis();
  replicas.push(...(await Promise.all([replica(), replica()])));
}, 30_000);
afterAll(async () => {
  await Promise.allSettled(clients.map((each) => each.close()));
  await Promise.all(replicas.map(({ process }) => stopService(process.child)));
  await redis?.stop();
  await proxy?.close();
  await sandbox?.close();
});

type Era = '2026' | '2025';
type Call = (args: Record<string, unknown>) => Promise<CallToolResult>;

/** A client of `url`'s /mcp/<domain> (channel unless named) in `era`, and its call of the domain's action tool (the send unless named). */
async function clientOf(url: string, era: Era, domain = 'channel'): Promise<Call> {
  const args = (rest: Record<string, unknown>) => ({ name: `${domain}_action`, arguments: { operationId: SEND, ...rest } });
  if (era === '2026') {
    const modern = await modernClient(url, sandbox.keys.full, { domain, info: { name: 'review28b', version: '0' } });
    clients.push(modern);
    return (rest) => modern.callTool(args(rest) as never, { timeout: 30_000 } as never) as Promise<CallToolResult>;
  }
  const legacy: TestClient = makeClient({ kind: 'v1', clientName: 'review28b' });
  await legacy.connect(
    new StreamableHTTPClientTransport(new URL(`/mcp/${domain}`, url), { requestInit: { headers: { authorization: `Bearer ${sandbox.keys.full}` } } }),
  );
  clients.push(legacy);
  return (rest) => legacy.callTool(args(rest), undefined, { timeout: 30_000 });
}

const sendsOf = (msisdn: string) => sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.msisdn === msisdn).length;

const CARRIED_OUT = /it was carried out|and it was carried out at/;
const NOTHING_CARRIED_OUT = /nothing was carried out with it|has NOT been run/;

describe('review28b: the replica with a confirmed send killed (SIGKILL) at a seeded moment; the call made again on the other', () => {
  it(`never sends twice on one yes, and each answer is true (seed ${SEED}, ${ROUNDS} rounds, both eras)`, { timeout: 120_000 }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const rng = seeded(SEED * 1000 + 700 + round);
      const moment = rng.pick(MOMENTS);
      const era: Era = round % 2 === 0 ? '2026' : '2025';
      const killed = rng.int(2);
      const msisdn = `628127${String(SEED % 1000).padStart(3, '0')}${String(round).padStart(3, '0')}`;
      const params = { msisdn, message: `Halo ${round}` };
      const where = `seed ${SEED} round ${round} (${era})`;

      const sender = replicas[killed]!;
      const onSender = await clientOf(sender.url, era);
      const preview = await onSender({ params });
      const token = structuredOf(preview).confirmationToken as string;
      expect(token, `${where}: ${textOf(preview)}`).toMatch(/^ct_/);
      const detail = await killAtMoment(
        proxy,
        () => onSender({ params, confirmationToken: token }),
        () => stopService(sender.process.child, 'SIGKILL'),
        moment,
        rng,
      );
      const sent = sendsOf(msisdn);
      const at = `${where} (${detail})`;
      expect(sent, `${at}: one yes`).toBeLessThanOrEqual(1);

      const onOther = await clientOf(replicas[1 - killed]!.url, era);
      // (a) The same token, on the other replica: run once in all (a yes the killed replica never took is this one's to run), else final, and true.
      const again = await onOther({ params, confirmationToken: token });
      const afterAgain = sendsOf(msisdn);
      expect(afterAgain, `${at}: the same token again: ${textOf(again)}`).toBeLessThanOrEqual(1);
      if (afterAgain === sent + 1) expect(structuredOf(again).outcome, `${at}: the same token again: ${textOf(again)}`).toBe('done');
      else {
        expect(structuredOf(again).confirmationToken, `${at}: no new way to say yes: ${textOf(again)}`).toBeUndefined();
        if (sent === 0) expect(textOf(again), `${at}: the same token again`).not.toMatch(CARRIED_OUT);
        if (sent === 1) expect(textOf(again), `${at}: the same token again`).not.toMatch(NOTHING_CARRIED_OUT);
      }
      // (b) The same write from scratch, and a new yes if a preview comes.
      const fresh = await onOther({ params });
      expect(sendsOf(msisdn), `${at}: asked again: ${textOf(fresh)}`).toBe(afterAgain);
      if (afterAgain === 1)
        expect(textOf(fresh), `${at}: asked again: ${textOf(fresh)}`).toMatch(
          /is still being sent by a replica of this service|Warning: (this server|a replica of this service \(this one or another\)) already sent exactly this/,
        );
      const freshToken = structuredOf(fresh).confirmationToken as string | undefined;
      if (freshToken) {
        const yes = await onOther({ params, confirmationToken: freshToken });
        const now = sendsOf(msisdn);
        expect(now - afterAgain, `${at}: a new yes: ${textOf(yes)}`).toBeLessThanOrEqual(1);
        expect(structuredOf(yes).outcome === 'done', `${at}: a new yes: ${textOf(yes)}`).toBe(now === afterAgain + 1);
      } else {
        expect(structuredOf(fresh).outcome, `${at}: asked again: ${textOf(fresh)}`).toBe('unknown');
      }
      replicas[killed] = await replica();
    }
  });

  it('killed between spending the token and claiming the write (its facts being read again): nothing was sent, the token is final and says it may have run; a new yes sends once', {
    timeout: 60_000,
  }, async () => {
    for (const era of ['2026', '2025'] as const) {
      const params = { ticketID: 'TCK-1001', message: `Mohon maaf atas keterlambatannya (${era})` };
      const replies = () =>
        sandbox.carriedOut().filter((entry) => entry.operationId === 'inbox.ticket.reply' && entry.params.message === params.message).length;
      const killed = era === '2026' ? 0 : 1;
      const reply = async (url: string) => {
        const send = await clientOf(url, era, 'inbox');
        return (rest: Record<string, unknown>) => send({ operationId: 'inbox.ticket.reply', ...rest });
      };
      const onSender = await reply(replicas[killed]!.url);
      const preview = await onSender({ params });
      const token = structuredOf(preview).confirmationToken as string;
      expect(token, textOf(preview)).toMatch(/^ct_/);
      const before = replies();
      // The yes spends the token, then reads the ticket again (its facts are bound): held there.
      const { held } = proxy.hold('arrival', 'GET');
      const yes = onSender({ params, confirmationToken: token }).catch((error: unknown) => error);
      const read = await held;
      await stopService(replicas[killed]!.process.child, 'SIGKILL');
      read.drop();
      await yes;
      await proxy.idle();
      proxy.hold('none');
      expect(replies(), era).toBe(before);

      const onOther = await reply(replicas[1 - killed]!.url);
      const again = await onOther({ params, confirmationToken: token });
      expect(replies(), `${era}: ${textOf(again)}`).toBe(before);
      expect(structuredOf(again).confirmationToken, textOf(again)).toBeUndefined();
      expect(textOf(again), era).toMatch(/already used .*it may already have been carried out; nothing was done now/);
      const fresh = await onOther({ params });
      expect(structuredOf(fresh).outcome, `${era}: ${textOf(fresh)}`).toBe('preview');
      expect(textOf(fresh), era).not.toMatch(/already sent exactly this/);
      const second = await onOther({ params, confirmationToken: structuredOf(fresh).confirmationToken });
      expect(structuredOf(second).outcome, `${era}: ${textOf(second)}`).toBe('done');
      expect(replies(), era).toBe(before + 1);
      replicas[killed] = await replica();
    }
  });
});
