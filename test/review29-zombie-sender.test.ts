// Review 29: since review28b a confirmed write's mark and an idempotency key's reservation name
// their process, and one whose process is dead is an unknown outcome at once (nothing will ever
// settle it). Dead was told by signal 0 and the start time in /proc/<pid>/stat. But a process
// killed whose parent has not waited for it is a zombie: signal 0 reaches it and its stat keeps its
// start time. So it is in a container whose init reaps no orphans (docker run without --init, a
// shell as pid 1), or under any host that does not wait for the server it started. Attacked: the
// built channel server, started under a parent that never waits (sh, then exec sleep), killed
// (SIGKILL) with its confirmed send held at the API, and the write dropped there. Found: on a
// second server sharing the state directory, the same write was "still being sent by this server or
// another one … Wait for it to finish" for the rest of the mark's 3-minute lease, and (the store
// read directly) a key reserved by such a process was unsettled, not "stopped", so each repeat
// waited 5 s to be told it might still be sent, for the key's whole 24 hours. Now a zombie is dead:
// its write previews as sent with an unknown outcome and a new yes sends it once; its key answers
// at once that its server stopped.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { launchServer, serverEntry } from '../packages/sandbox/src/index.js';
import { makeClient, structuredOf, textOf, toolOf } from './helpers.js';
import { holdingSandboxPerFile } from './review28b-holding-proxy.js';

const SEND = 'channel.whatsapp.send';
const rig = holdingSandboxPerFile('review29-zombie-');
/** Runs `"$0" "$@"` under a parent that never waits for it (sleep, exec'd by the shell that started it, holding none of its pipes), stdin kept. */
// (dash gives a background command /dev/null for stdin whatever it is told, so stdin goes by another descriptor.)
const UNREAPED = ['-c', 'exec 3<&0; "$0" "$@" <&3 3<&- & exec sleep 600 </dev/null >/dev/null 2>&1 3<&-'];

const isLinux = process.platform === 'linux';

/** The only child of `parent` (pid), once it has one. */
function childOf(parent: number): number {
  const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(' ');
  expect(children.length).toBe(1);
  return Number(children[0]);
}

/** Kills `pid` (SIGKILL) and waits until it is a zombie (its parent never waits for it). */
async function killToZombie(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  for (let tries = 0; tries < 100; tries++) {
    if (/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`process ${pid} did not become a zombie`);
}

describe.runIf(isLinux)('a sender killed whose parent never waits for it (a zombie)', () => {
  it('its confirmed write, dropped at the API, is an unknown outcome at once on another server, and a new yes sends it once', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(rig.root, 'state-'));
    const env = { ENGAGE_BASE_URL: rig.proxy.baseUrl, ENGAGE_API_KEY: rig.sandbox.keys.full, ENGAGE_STATE_DIR: dir, ENGAGE_CONFIRM: 'all' };
    const transport = new StdioClientTransport({
      command: 'sh',
      args: [...UNREAPED, process.execPath, serverEntry('channel')],
      env: { ...getDefaultEnvironment(), ...env },
      stderr: 'pipe',
    });
    const client = makeClient({ kind: 'v1' });
    await client.connect(transport);
    const parent = transport.pid as number;
    const survivor = await launchServer('channel', env);
    const params = { msisdn: '6281290290041', message: 'Halo, zombie' };
    const call = (on: 'first' | 'survivor', args: Record<string, unknown>) =>
      (on === 'first' ? client : survivor.client).callTool({ name: toolOf(SEND), arguments: { operationId: SEND, params, ...args } }, undefined, {
        timeout: 30_000,
      }) as Promise<CallToolResult>;
    const sends = () => rig.sandbox.carriedOut().filter((entry) => entry.operationId === SEND && entry.params.msisdn === params.msisdn).length;
    try {
      const token = structuredOf(await call('first', {})).confirmationToken as string;
      const { held } = rig.proxy.hold('arrival');
      const lost = call('first', { confirmationToken: token }).catch((error: unknown) => error);
      const hold = await held;
      await killToZombie(childOf(parent));
      hold.drop();
      await lost;
      await rig.proxy.idle();
      expect(sends()).toBe(0);

      const again = await call('survivor', {});
      expect(textOf(again)).not.toMatch(/still being sent/);
      expect(structuredOf(again).outcome, textOf(again)).toBe('preview');
      expect(textOf(again)).toMatch(/already sent exactly this channel\.whatsapp\.send at .*, and its outcome is unknown/);
      const yes = await call('survivor', { confirmationToken: structuredOf(again).confirmationToken as string });
      expect(structuredOf(yes).outcome, textOf(yes)).toBe('done');
      expect(sends()).toBe(1);
    } finally {
      await Promise.all([client.close(), survivor.close()]);
      // The parent that never waits (sleep), if closing did not end it.
      try {
        process.kill(parent, 'SIGKILL');
      } catch {
        // Ended already.
      }
    }
  });

  it('an idempotency key it reserved and never settled is one whose server stopped, at once', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(rig.root, 'state-'));
    const script = join(rig.root, 'reserver.mts');
    writeFileSync(
      script,
      `import { FileGuardStore } from ${JSON.stringify(new URL('../shared/src/call/file-guard-store.ts', import.meta.url).pathname)};
const now = Date.now();
await new FileGuardStore(process.argv[2]).reserve('k', { operationId: '${SEND}', digest: 'd', at: now }, now + 86_400_000);
console.log('reserved');
setInterval(() => {}, 1000);`,
    );
    const tsx = new URL('../node_modules/tsx/dist/esm/index.mjs', import.meta.url).pathname;
    const parent = spawn('sh', [...UNREAPED, process.execPath, '--import', tsx, script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => parent.stdout.once('data', () => resolve()));
      // Alive, under the same parent: still being sent.
      expect((await new FileGuardStore(dir).lookup('k'))?.stopped).toBeUndefined();
      await killToZombie(childOf(parent.pid as number));
      const record = await new FileGuardStore(dir).lookup('k');
      expect(record?.operationId).toBe(SEND);
      expect(record?.stopped).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
