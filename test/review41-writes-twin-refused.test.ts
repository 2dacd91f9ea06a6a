// A write that needs no yes, whose identical twin on another server of the state folder was read as
// still at the API and then ended refused (the API said no, or it was given up before its send: its
// mark gives the place back): the claim found nothing sent, so nothing went out twice. Since 0d2ab8d
// the "Done" said all the same that the twin's outcome was unknown and the customer may now have it
// twice, which the model passes on to the user as a possible double message that never was.
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
const dir = mkdtempSync(join(tmpdir(), 'review41-twin-refused-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A state folder's store where another server's identical write is at the API when it is read, and is refused (nothing sent) just before this server claims. */
class OtherRefusedBeforeClaim extends FileGuardStore {
  private other: string | undefined;
  override async lastSentWrite(write: string, now: number) {
    if (!this.other) {
      this.other = write;
      await super.claimWrite(write, 'the-other-server', NO_YES, now - 50, now - 50);
    }
    return super.lastSentWrite(write, now);
  }
  override async claimWrite(write: string, id: string, approvedAt: number, now: number, clockNow?: number) {
    if (write === this.other) await super.settleWrite(write, 'the-other-server', 'refused');
    return super.claimWrite(write, id, approvedAt, now, clockNow);
  }
}

it('a write whose twin, read as at the API, was refused before the claim is a plain "Done": nothing went out twice', async () => {
  const store = new OtherRefusedBeforeClaim(dir);
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none', ENGAGE_STATE_DIR: dir }, server: { guardStore: () => store } });
  try {
    const done = await server.call(SEND, { msisdn: '6281377700041', message: 'Pesanan Anda sudah dikirim' });
    expect(countCarriedOut(sandbox, SEND)).toBe(1);
    expect(textOf(done)).toMatch(/^Done: channel\.whatsapp\.send was carried out\./);
    expect(textOf(done)).not.toMatch(/also sent|twice/);
  } finally {
    await server.close();
  }
});
