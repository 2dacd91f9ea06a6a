// Review 28b: a write that needs no yes (ENGAGE_CONFIRM=none) sent with an idempotencyKey, the
// built channel server killed (SIGKILL) at a seeded moment of it (see review28b-stdio-chaos), then
// started again on the same state directory and asked for the same write with the same key: it is
// never sent a second time, and the answer says what is known (the first answer, or that its
// sender stopped and its outcome is unknown), never that it failed. Found: each such repeat waited
// 5 s for the dead sender and then said "is still being sent, or the server that sent it stopped";
// the reservation now names its process, as a confirmed write's mark does, and a dead one is said so at once. CHAOS_SEED and CHAOS_ROUNDS replay a run.
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf, toolOf } from './helpers.js';
import { holdingSandboxPerFile, killAtMoment, killServer, MOMENTS } from './review28b-holding-proxy.js';
import { seeded } from './seeded.js';

const SEND = 'channel.whatsapp.send';
const SEED = Number(process.env.CHAOS_SEED ?? 2808);
const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 6);

const rig = holdingSandboxPerFile('review28b-idem-');
const { root } = rig;

const launch = (dir: string) =>
  launchServer('channel', { ENGAGE_BASE_URL: rig.proxy.baseUrl, ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_STATE_DIR: dir, ENGAGE_CONFIRM: 'none' });
const call = (server: LaunchedServer, args: Record<string, unknown>) =>
  server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, ...args } }, undefined, { timeout: 30_000 }) as Promise<CallToolResult>;
const sendsOf = (msisdn: string) => rig.sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.msisdn === msisdn).length;

const kill = killServer;

describe('review28b: the stdio server killed (SIGKILL) at a seeded moment of a write with an idempotencyKey', () => {
  it(`the same key after the restart never sends it again (seed ${SEED}, ${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const dir = join(root, 'state');
    let server = await launch(dir);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const rng = seeded(SEED * 1000 + 300 + round);
        const moment = rng.pick(MOMENTS);
        const msisdn = `628126${String(SEED % 1000).padStart(3, '0')}${String(round).padStart(3, '0')}`;
        const args = { params: { msisdn, message: `Pesanan ${round}` }, idempotencyKey: `order-${SEED}-${round}` };
        const sender = server;
        const detail = await killAtMoment(
          rig.proxy,
          () => call(sender, args),
          () => kill(sender),
          moment,
          rng,
        );
        const where = `seed ${SEED} round ${round} (${detail})`;
        const sent = sendsOf(msisdn);
        expect(sent, where).toBeLessThanOrEqual(1);
        server = await launch(dir);
        const again = await call(server, args);
        const now = sendsOf(msisdn);
        // Sent once in all: by the killed server, or (if it never reserved the key) now.
        expect(now, `${where}: ${textOf(again)}`).toBeLessThanOrEqual(1);
        const outcome = structuredOf(again).outcome;
        if (now === sent + 1) expect(outcome, `${where}: ${textOf(again)}`).toBe('done');
        else if (sent === 1) expect(['done', 'unknown'], `${where}: ${textOf(again)}`).toContain(outcome);
        else expect(outcome, `${where}: ${textOf(again)}`).not.toBe('done');
        // Its sender is dead: not "still being sent, or the server stopped", but that it stopped.
        if (outcome === 'unknown')
          expect(textOf(again), where).toMatch(
            /The write with this idempotencyKey \(first used at .*\) was being sent by a server that stopped \(killed, or crashed\) before it noted the API's answer: nothing was sent again\. Its outcome is unknown/,
          );
      }
    } finally {
      await server.close();
    }
  });
});
