// The other half of review45-twin-late-mark: a mark dated inside its server's turn was still missed
// by a preview on another server that read the mark's file while that turn was writing it (the read
// took no lock); its yes, dated after the mark, then sent the write again. Now a preview reads the
// store in a turn of its own: it waits for the other's turn and finds the write at the API. The turn
// is made exact in another process (the other server), held between dating its mark and writing it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type Sandbox, startSandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf, until } from './helpers.js';

const SEND = 'channel.whatsapp.send';
let sandbox: Sandbox;
const root = mkdtempSync(join(tmpdir(), 'review45-twin-read-in-turn-'));
const dir = join(root, 'state');
const signals = join(root, 'signals');
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The other server: claims `write`, its turn held (once the mark is dated, before it is written) until `turn` exists; settles it done once `settle` exists. */
const OTHER_SERVER = (store: string) => `import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { FileGuardStore } from ${JSON.stringify(store)};
import { systemSteadyClock } from ${JSON.stringify(store.replace('file-guard-store', 'process-place'))};
const [dir, write, signals] = process.argv.slice(2);
mkdirSync(signals, { recursive: true });
const pause = new Int32Array(new SharedArrayBuffer(4));
let holding = true;
const clock = () => {
  // The mark's expiry is read last in the claim's turn, once the mark is dated: the turn is held there.
  if (holding && new Error().stack?.includes('renewed')) {
    holding = false;
    writeFileSync(signals + '/dated', '');
    while (!existsSync(signals + '/turn')) Atomics.wait(pause, 0, 0, 5);
  }
  return Date.now();
};
const store = new FileGuardStore(dir, undefined, clock, systemSteadyClock);
const at = Date.now();
const refused = await store.claimWrite(write, 'the-other-server', at - 1, at);
if (refused) throw new Error('not claimed');
while (!existsSync(signals + '/settle')) await new Promise((resolve) => setTimeout(resolve, 5));
await store.settleWrite(write, 'the-other-server', 'done');
writeFileSync(signals + '/settled', '');
`;

/** This server's store: the write's digest as it reads it, and how many reads began. */
class ReadsNoted extends FileGuardStore {
  write: string | undefined;
  reads = 0;
  override lastSentWrite(write: string, now: number) {
    this.write = write;
    this.reads++;
    return super.lastSentWrite(write, now);
  }
}

it("a preview made while another server's turn writes the same write's mark finds it, and its yes sends nothing", async () => {
  const store = new ReadsNoted(dir);
  const server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_STATE_DIR: dir }, server: { guardStore: () => store } });
  const script = join(root, 'other-server.mts');
  let other: ReturnType<typeof spawn> | undefined;
  writeFileSync(script, OTHER_SERVER(new URL('../shared/src/call/file-guard-store.ts', import.meta.url).pathname));
  try {
    const params = { msisdn: '6281377700047', message: 'Pesanan Anda sudah dikirim' };
    await server.call(SEND, params); // a first preview, for the write's digest
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, store.write!, signals], { stdio: ['ignore', 'inherit', 'inherit'] });
    other = child;
    const ended = new Promise((resolve) => child.on('exit', resolve));
    await until('the other server dated its mark, in its turn', () => existsSync(join(signals, 'dated')));
    const readsBefore = store.reads;
    let preview: Awaited<ReturnType<typeof server.call>> | undefined;
    const previewing = server.call(SEND, params).then((reply) => {
      preview = reply;
    });
    // Done (the store read without the lock), or waiting for the other's turn to read it.
    await until('the preview is done or waits to read the store', () => preview !== undefined || store.reads > readsBefore);
    writeFileSync(join(signals, 'turn'), '');
    await previewing;
    writeFileSync(join(signals, 'settle'), '');
    await until('the other server settled its write', () => existsSync(join(signals, 'settled')));
    await ended;
    // Told the write is being sent (no token), or a preview whose yes, used now, must send nothing.
    const token = structuredOf(preview!).confirmationToken as string | undefined;
    const confirmed = token ? await server.call(SEND, params, { confirmationToken: token }) : preview!;
    expect(countCarriedOut(sandbox, SEND), `${textOf(preview!)}\n---\n${textOf(confirmed)}`).toBe(0);
    expect(textOf(confirmed)).not.toMatch(/^Done: /);
  } finally {
    other?.kill('SIGKILL');
    await server.close();
  }
});
