// Two servers on one state folder each previewed and confirmed exactly the same write, and both sent
// it with a plain "Done" (bench/chaos.ts seed 7, at review43-orphans). Server B's claim dated its
// mark before it waited for the state lock, so the mark was dated earlier than anyone could see it;
// server A's preview read the store in that gap (no mark yet: no warning) and its yes was dated after
// B's mark time; once B's write was done, A's claim found it sent before the yes and sent it again.
// Now a mark is dated inside the store's turn that makes it visible, and a preview reads the store in
// a turn of its own, so a yes is never dated after a mark it could not see. The gap is made exact:
// the test holds the state lock while B's claim waits for it and A's preview is put together.
// vitest: modules of its own (it waits for the system clock to pass forwardNow's times: a file before it in a
// shared worker that left that clock ahead, which never goes back, would make it wait as long).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import type { PendingAudit } from '../shared/src/call/guard-store.js';
import { lock } from '../shared/src/call/state-lock.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf, until } from './helpers.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const dir = mkdtempSync(join(tmpdir(), 'review45-twin-late-mark-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Server B's store: its claim, having taken its time, goes on to mark the write once the test holds the state lock. */
class ClaimHeld extends FileGuardStore {
  claimedWith: number | undefined;
  lockHeld: () => void = () => undefined;
  private readonly held = new Promise<void>((resolve) => {
    this.lockHeld = resolve;
  });
  override async claimWrite(write: string, id: string, approvedAt: number, now: number, clockNow?: number, audit?: PendingAudit) {
    this.claimedWith = now;
    await this.held;
    return super.claimWrite(write, id, approvedAt, now, clockNow, audit);
  }
}

/** Server A's store: counts its reads of the write's last attempt. */
class ReadsCounted extends FileGuardStore {
  reads = 0;
  override lastSentWrite(write: string, now: number) {
    this.reads++;
    return super.lastSentWrite(write, now);
  }
}

it('a preview put together while another server waits to mark the same write is never a yes that sends it again', async () => {
  const storeA = new ReadsCounted(dir);
  const storeB = new ClaimHeld(dir);
  const serverA = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_STATE_DIR: dir }, server: { guardStore: () => storeA } });
  const serverB = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_STATE_DIR: dir }, server: { guardStore: () => storeB } });
  try {
    const params = { msisdn: '6281377700045', message: 'Pesanan Anda sudah dikirim' };
    const tokenB = structuredOf(await serverB.call(SEND, params)).confirmationToken as string;
    const confirmedB = serverB.call(SEND, params, { confirmationToken: tokenB });
    await until("B's claim took its time", () => storeB.claimedWith !== undefined);
    // B's claim now waits for the lock, as it does while another server's turn holds it.
    const release = await lock(join(dir, 'state.lock'));
    storeB.lockHeld();
    let released = false;
    let previewA: Awaited<ReturnType<typeof serverA.call>> | undefined;
    try {
      // A's preview begins a millisecond after B's claim took its time: by B's old dating, A's yes would come after B's mark.
      const markedAt = storeB.claimedWith!;
      await until('the clock is past B’s claim time', () => Date.now() > markedAt + 1, 5_000, 1);
      const preview = serverA.call(SEND, params).then((reply) => {
        previewA = reply;
        return reply;
      });
      // A's preview is done (it read the store without the lock), or it waits for a turn of its own to read it.
      await until("A's preview is done or waits for the lock", () => previewA !== undefined || storeA.reads >= 1);
      release();
      released = true;
      await preview;
    } finally {
      if (!released) release();
    }
    expect(textOf(await confirmedB)).toMatch(/^Done: /);
    expect(countCarriedOut(sandbox, SEND)).toBe(1);
    const tokenA = structuredOf(previewA!).confirmationToken as string;
    const confirmedA = await serverA.call(SEND, params, { confirmationToken: tokenA });
    // Either A's preview said B's send (and its yes dates before it), or B's mark is dated after A's yes: A's yes sends nothing.
    expect(countCarriedOut(sandbox, SEND), textOf(confirmedA)).toBe(1);
    expect(textOf(confirmedA)).not.toMatch(/^Done: /);
  } finally {
    await serverA.close();
    await serverB.close();
  }
});
