// A confirmed write whose preview was put together while the shared store did not answer its read of
// the same write's last attempt (a Redis blip; a state folder's file not read): the preview fell back
// to this server's own journal and said nothing, and the store answered again by the yes. Exactly this
// write had gone out from another server a minute before: the person, never told, said yes, and the
// claim (which refuses only a send since the yes) sent it again with a plain "Done". The person's yes
// counted for what was not shown. Now such a preview says that whether it went out lately from
// another server could not be checked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'review41-preview-silent-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A state folder's store whose reads of a write's last attempt fail (as a Redis blip would): what another server sent is not seen. */
class SilentWhilePreviewing extends FileGuardStore {
  override async lastSentWrite(): Promise<never> {
    throw new Error('the shared store did not answer');
  }
}

it('a preview whose read of the shared store failed says the earlier send could not be checked', async () => {
  const store = new SilentWhilePreviewing(dir);
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_STATE_DIR: dir }, server: { guardStore: () => store } });
  try {
    const params = { msisdn: '6281377700071', message: 'Pesanan Anda sudah dikirim' };
    const preview = await server.call(SEND, params);
    expect(structuredOf(preview).confirmationToken).toBeDefined();
    expect(textOf(preview)).toMatch(/could not be checked/);
  } finally {
    await server.close();
  }
});
