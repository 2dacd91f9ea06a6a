// Review 28b: a confirmed write reaches the API at most once per approval whatever happens to the
// stdio server's process. The built channel server, over stdio, against the sandbox behind a proxy
// that can hold the send; the server is killed (SIGKILL) at a seeded moment of its confirmed send:
// at a random time after the yes, with the request arrived at the API (taken by it, or not), with
// the API's answer held, or just after the answer went back (while the state files are written).
// Then a server is started again on the same state directory and asked (a) with the same token and
// (b) for the same write from scratch, and its yes is given: the sandbox's own record says how many
// times the write arrived. CHAOS_SEED and CHAOS_ROUNDS replay a run.
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf, toolOf } from './helpers.js';
import { holdingSandboxPerFile, killAtMoment, killServer, MOMENTS } from './review28b-holding-proxy.js';
import { seeded } from './seeded.js';

const SEND = 'channel.whatsapp.send';
const SEED = Number(process.env.CHAOS_SEED ?? 2808);
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 24);

const rig = holdingSandboxPerFile('review28b-chaos-');
const { root } = rig;

const launch = (dir: string) =>
  launchServer('channel', { ENGAGE_BASE_URL: rig.proxy.baseUrl, ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_STATE_DIR: dir, ENGAGE_CONFIRM: 'all' });

const call = (server: LaunchedServer, args: Record<string, unknown>) =>
  server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, ...args } }, undefined, { timeout: 30_000 }) as Promise<CallToolResult>;

/** Sends of exactly these params the sandbox carried out. */
const sendsOf = (msisdn: string) => rig.sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.msisdn === msisdn).length;

const kill = killServer;

/** The warning a preview starts with once the same write went out, or may have: its sender is gone, so it is not "still being sent". */
const MAY_HAVE_GONE_OUT =
  /Warning: this server or another one sharing its state directory \(another host, or before a restart\) already sent exactly this channel\.whatsapp\.send at .*, and (it was carried out|its outcome is unknown \(it may have been carried out\))\./;
const STILL_BEING_SENT = /still being sent/;

/**
 * After the sender was killed, on `survivor` (a server started again, or another process on the
 * same state directory): the killed one's token, then the same write from scratch and its yes.
 */
async function checkAfterKill(survivor: LaunchedServer, token: string, params: { msisdn: string }, sent: number, where: string): Promise<void> {
  const again = await call(survivor, { params, confirmationToken: token });
  expect(sendsOf(params.msisdn), `${where}: the same token again: ${textOf(again)}`).toBe(sent);
  // This server's own token, from before the restart (or from the other process): not "never issued by this server".
  expect(textOf(again), `${where}: the same token again`).not.toMatch(/never issued by this server/);
  expect(textOf(again), `${where}: the same token again`).toMatch(
    /^The confirmationToken is not valid \(not one this server issued for this key since it started, or altered\): nothing was run\./,
  );
  const fresh = await call(survivor, { params });
  // The process that sent it is dead: the write is not "still being sent" (wait for what?), its outcome is unknown.
  for (const [what, answer] of [
    ['the same token again', again],
    ['asked again', fresh],
  ] as const) {
    expect(textOf(answer), `${where}: ${what}`).not.toMatch(STILL_BEING_SENT);
    expect(structuredOf(answer).outcome, `${where}: ${what}: ${textOf(answer)}`).toBe('preview');
    if (sent === 1) expect(textOf(answer), `${where}: ${what}`).toMatch(MAY_HAVE_GONE_OUT);
  }
  const freshToken = structuredOf(fresh).confirmationToken as string;
  const yes = await call(survivor, { params, confirmationToken: freshToken });
  const now = sendsOf(params.msisdn);
  expect(now - sent, `${where}: a new yes: ${textOf(yes)}`).toBeLessThanOrEqual(1);
  expect(structuredOf(yes).outcome === 'done', `${where}: a new yes: ${textOf(yes)}`).toBe(now === sent + 1);
}

describe('review28b: the stdio server killed (SIGKILL) at a seeded moment of a confirmed send', () => {
  it(`never sends twice on one yes, and tells the truth after the restart (seed ${SEED}, ${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const dir = join(root, 'state');
    // The server started again after each kill is the next round's sender.
    let server = await launch(dir);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const rng = seeded(SEED * 1000 + round);
        const moment = rng.pick(MOMENTS);
        const msisdn = `628128${String(SEED % 1000).padStart(3, '0')}${String(round).padStart(3, '0')}`;
        const params = { msisdn, message: `Halo ${round}` };
        const where = `seed ${SEED} round ${round}`;
        const preview = await call(server, { params });
        const token = structuredOf(preview).confirmationToken as string;
        expect(token, `${where}: ${textOf(preview)}`).toMatch(/^ct_/);
        const detail = await killAtMoment(
          rig.proxy,
          () => call(server, { params, confirmationToken: token }),
          () => kill(server),
          moment,
          rng,
        );
        const sent = sendsOf(msisdn);
        expect(sent, `${where} (${detail}): one yes`).toBeLessThanOrEqual(1);
        server = await launch(dir);
        await checkAfterKill(server, token, params, sent, `${where} (${detail})`);
      }
    } finally {
      await server.close();
    }
  });

  it(`two processes on one state directory (a host that launched it twice), killed in turns (seed ${SEED})`, { timeout: 120_000 }, async () => {
    const dir = join(root, 'shared-state');
    const servers = [await launch(dir), await launch(dir)];
    try {
      for (let round = 0; round < Math.ceil(ROUNDS / 2); round++) {
        const rng = seeded(SEED * 1000 + 500 + round);
        const moment = rng.pick(MOMENTS);
        const killed = round % 2;
        const msisdn = `628129${String(SEED % 1000).padStart(3, '0')}${String(round).padStart(3, '0')}`;
        const params = { msisdn, message: `Halo lagi ${round}` };
        const where = `seed ${SEED} two processes round ${round}`;
        const preview = await call(servers[killed]!, { params });
        const token = structuredOf(preview).confirmationToken as string;
        const sender = servers[killed]!;
        const detail = await killAtMoment(
          rig.proxy,
          () => call(sender, { params, confirmationToken: token }),
          () => kill(sender),
          moment,
          rng,
        );
        const sent = sendsOf(msisdn);
        expect(sent, `${where} (${detail}): one yes`).toBeLessThanOrEqual(1);
        await checkAfterKill(servers[1 - killed]!, token, params, sent, `${where} (${detail}), on the other process`);
        servers[killed] = await launch(dir);
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});
