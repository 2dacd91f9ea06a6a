// A preview put together while another server began sending exactly that write (two hosts on one
// state folder): the check for the same write in flight ran before the preview was dated, the
// statement's read found it in flight but warned only of a write that had ended, and the token's yes
// dated after that send began. Once the other send ended (unknown), the token sent the write again,
// with a plain "Done" (bench/chaos.ts seed 7: a "twin" confirmed write on stdio). Now a preview that
// finds the same write being sent says so, and its yes counts as given before that send: used after
// it, it sends nothing and the person is asked again. The race is made exact with the store's reads.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { NO_YES } from '../shared/src/call/shared-mark.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'review39-preview-while-sending-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Another server's identical write is marked at the API just after the confirm stage's check for one in flight, before the preview is dated. */
class OtherStartsDuringPreview extends FileGuardStore {
  reads = 0;
  other: string | undefined;
  override async lastSentWrite(write: string, now: number) {
    const found = await super.lastSentWrite(write, now);
    if (++this.reads === 1) {
      this.other = write;
      await super.claimWrite(write, 'the-other-server', NO_YES, now - 1, now - 1);
    }
    return found;
  }
}

it('a yes to a preview put together while exactly that write began going out sends nothing', async () => {
  const store = new OtherStartsDuringPreview(dir);
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_STATE_DIR: dir }, server: { guardStore: () => store } });
  try {
    const params = { msisdn: '6281377700051', message: 'Pesanan Anda sudah dikirim' };
    const preview = await server.call(SEND, params);
    expect(textOf(preview)).toMatch(/is being sent right now/);
    await store.settleWrite(store.other!, 'the-other-server', 'unknown');
    const token = structuredOf(preview).confirmationToken as string;
    const confirmed = await server.call(SEND, params, { confirmationToken: token });
    expect(countCarriedOut(sandbox, SEND), textOf(confirmed)).toBe(0);
    expect(textOf(confirmed)).toMatch(/after this confirmation was given/);
  } finally {
    await server.close();
  }
});
