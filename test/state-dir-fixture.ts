// One sandbox and a root folder of fresh state directories per test file, and a channel server in
// this process on a file store: what the tests of the stdio servers' shared state directory share.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { DOMAINS, countCarriedOut, inProcess } from './helpers.js';

export const SEND = 'channel.whatsapp.send';

/** Registers the file's beforeAll/afterAll; `msisdnPrefix` keeps each file's numbers apart (eight digits, 62…). */
export function stateDirFixture(name: string, msisdnPrefix: string) {
  let sandbox: Sandbox | undefined;
  const root = mkdtempSync(join(tmpdir(), `${name}-`));
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });
  const started = () => {
    if (!sandbox) throw new Error('the sandbox starts in beforeAll');
    return sandbox;
  };
  let made = 0;
  return {
    /** The folder every state directory of this file is made in (removed after the file's tests). */
    root,
    sandbox: started,
    stateDir: () => mkdtempSync(join(root, `dir-${++made}-`)),
    /** A script a real process runs (`node --import tsx SCRIPT DIR TURNS`): the file store of DIR takes a counter TURNS times. */
    takerScript: () => {
      const script = join(root, 'taker.mts');
      const store = new URL('../shared/src/call/file-guard-store.ts', import.meta.url).pathname;
      writeFileSync(
        script,
        `import { FileGuardStore } from ${JSON.stringify(store)};
const store = new FileGuardStore(process.argv[2]);
for (let n = 0; n < Number(process.argv[3]); n++) await store.take('c', 1, 1e9, Date.now() + 3_600_000);`,
      );
      return script;
    },
    params: (n: number) => ({ msisdn: `${msisdnPrefix}${String(n).padStart(5, '0')}`, message: `Halo ${n}` }),
    sends: () => countCarriedOut(started(), SEND),
    files: (dir: string, kind: string) => (existsSync(join(dir, kind)) ? readdirSync(join(dir, kind)) : []),
    /** A channel server in this process on a file store in `dir`. */
    channelOn: (dir: string, confirm = 'none', store = new FileGuardStore(dir)) =>
      inProcess(DOMAINS.channel!, started(), { env: { ENGAGE_CONFIRM: confirm }, server: { guardStore: () => store } }),
  };
}
