// Two servers sharing a state folder asked for exactly the same write that needs no yes at about the
// same moment (bench/chaos.ts seed 6, "twin" calls on stdio): the second read the first's attempt as
// still at the API, then the first ended with an unknown outcome, then the second's claim found it
// ended and sent. Its "Done" said nothing of the first, though the customer may now have it twice: the
// note of an earlier unknown attempt went only by the read made before the claim. Now an attempt read
// as still at the API that has ended by the claim is told as one whose outcome this call cannot know.
// The race is made exact here: the store's read is answered while the other server's mark is in
// flight, and the other settles "unknown" just before this server's claim.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, textOf } from './helpers.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'review39-twin-ended-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A state folder's store where another server's identical write is at the API when it is read, and ends `ending` just before this server claims. */
class OtherEndsBeforeClaim extends FileGuardStore {
  private other: string | undefined;
  constructor(
    dir: string,
    private readonly ending: 'unknown' | 'refused' = 'unknown',
  ) {
    super(dir);
  }
  override async lastSentWrite(write: string, now: number) {
    if (!this.other) {
      this.other = write;
      await super.claimWrite(write, 'the-other-server', NO_YES, now - 50, now - 50);
    }
    return super.lastSentWrite(write, now);
  }
  override async claimWrite(write: string, id: string, approvedAt: number, now: number, clockNow?: number) {
    if (write === this.other) await super.settleWrite(write, 'the-other-server', this.ending);
    return super.claimWrite(write, id, approvedAt, now, clockNow);
  }
}

it('a write whose identical twin ended unknown between the read and the claim says the customer may have it twice', async () => {
  const store = new OtherEndsBeforeClaim(dir);
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: dir }, server: { guardStore: () => store } });
  try {
    const done = await server.call(SEND, { msisdn: '6281377700031', message: 'Pesanan Anda sudah dikirim' });
    expect(countCarriedOut(sandbox, SEND)).toBe(1);
    expect(textOf(done)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
    expect(textOf(done)).toMatch(
      /Exactly this channel\.whatsapp\.send was also sent by .* and whether that one was carried out is unknown: the customer may now have it twice/,
    );
  } finally {
    await server.close();
  }
});

// review41-writes: a twin read as at the API that was then refused (the API said no, or it was given
// up before its send: its mark gives the place back) sent nothing, so nothing went out twice. Since
// 0d2ab8d the "Done" said all the same that the customer may now have it twice, which the model
// passes on to the user as a possible double message that never was.
it('a write whose twin, read as at the API, was refused before the claim is a plain "Done": nothing went out twice', async () => {
  const folder = mkdtempSync(join(dir, 'refused-'));
  const server = await inProcess(DOMAINS.channel!, sandbox, {
    env: { ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: folder },
    server: { guardStore: () => new OtherEndsBeforeClaim(folder, 'refused') },
  });
  try {
    const before = countCarriedOut(sandbox, SEND);
    const done = await server.call(SEND, { msisdn: '6281377700041', message: 'Pesanan Anda sudah dikirim' });
    expect(countCarriedOut(sandbox, SEND)).toBe(before + 1);
    expect(textOf(done)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
    expect(textOf(done)).not.toMatch(/also sent|twice/);
  } finally {
    await server.close();
  }
});

/** A store where another server's identical write is claimed and carried out after this server read the store, before its claim. */
class OtherWholeBeforeClaim extends FileGuardStore {
  private seen = false;
  override async claimWrite(write: string, id: string, approvedAt: number, now: number, clockNow?: number) {
    if (!this.seen) {
      this.seen = true;
      await super.claimWrite(write, 'the-other-server', NO_YES, now - 20, now - 20);
      await super.settleWrite(write, 'the-other-server', 'done');
    }
    return super.claimWrite(write, id, approvedAt, now, clockNow);
  }
}

it('a write whose identical twin began and was carried out between the read and the claim says the customer now has it twice', async () => {
  const folder = mkdtempSync(join(dir, 'whole-'));
  const server = await inProcess(DOMAINS.channel!, sandbox, {
    env: { ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: folder },
    server: { guardStore: () => new OtherWholeBeforeClaim(folder) },
  });
  try {
    const done = await server.call(SEND, { msisdn: '6281377700032', message: 'Terima kasih atas pesanan Anda' });
    expect(textOf(done)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
    expect(textOf(done)).toMatch(/Exactly this channel\.whatsapp\.send was also sent by .* and it was carried out: the customer now has it twice/);
  } finally {
    await server.close();
  }
});
