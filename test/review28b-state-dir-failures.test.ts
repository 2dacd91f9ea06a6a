// Review 28b: the stdio servers' state directory failing otherwise than a full disk (covered by
// review25b): a read-only file system (from the start, from between the preview and the yes, and
// from while the confirmed send is at the API), state files replaced by folders or FIFOs between the
// preview and the yes, and a state.json cut short (as a copy or an earlier version's crash leaves
// it). Each must refuse clearly and send nothing, or carry on and say what happened.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { smallDisk, type SmallDisk } from './helpers/small-disk.js';
import { structuredOf, textOf, toolOf } from './helpers.js';
import { startHoldingProxy, type HoldingProxy } from './review28b-holding-proxy.js';
import { SEND, stateDirFixture } from './state-dir-fixture.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review28b-fs', '62812828');

let proxy: HoldingProxy;
beforeAll(async () => {
  proxy = await startHoldingProxy(sandbox().baseUrl);
});
afterAll(async () => {
  await proxy?.close();
});

const launch = (dir: string, confirm = 'all') =>
  launchServer('channel', { ENGAGE_BASE_URL: proxy.baseUrl, ENGAGE_API_KEY: sandbox().keys.full, ENGAGE_STATE_DIR: dir, ENGAGE_CONFIRM: confirm });
const call = (server: LaunchedServer, args: Record<string, unknown>) =>
  server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, ...args } }, undefined, { timeout: 30_000 }) as Promise<CallToolResult>;
const fifo = (path: string) => execFileSync('mkfifo', ['-m', '600', path]);

/** A preview, then `between` done to the state directory, then the yes: refused, saying so and that nothing was sent. */
async function refusedAtTheYes(dir: string, n: number, between: () => void, why: RegExp): Promise<void> {
  const server = await launch(dir);
  try {
    const preview = await call(server, { params: params(n) });
    const token = structuredOf(preview).confirmationToken as string;
    expect(token, textOf(preview)).toMatch(/^ct_/);
    between();
    const before = sends();
    const yes = await call(server, { params: params(n), confirmationToken: token });
    expect(yes.isError, textOf(yes)).toBe(true);
    expect(textOf(yes)).toMatch(why);
    expect(textOf(yes)).toMatch(/Nothing was sent|nothing was sent|has NOT been run/);
    expect(sends(), textOf(yes)).toBe(before);
    // The server is still there: a read answers.
    const read = await server.client.callTool({ name: 'channel_read', arguments: { operationId: 'channel.whatsapp.status' } });
    expect(read.isError, textOf(read as CallToolResult)).toBeFalsy();
  } finally {
    await server.close();
  }
}

describe.runIf(process.platform === 'linux' && process.getuid?.() === 0)('a read-only file system under the state directory', () => {
  let disk: SmallDisk | undefined;
  const remount = (mode: 'ro' | 'rw') => execFileSync('mount', ['-o', `remount,${mode}`, disk!.path], { stdio: 'ignore' });
  beforeAll(() => {
    disk = smallDisk(join(root, 'disk'));
  });
  afterAll(() => {
    disk?.unmount();
  });

  it('from between the preview and the yes: refused, saying the file system is read-only; nothing is sent', { timeout: 60_000 }, async () => {
    if (!disk) return;
    const dir = join(disk.path, 'between');
    mkdirSync(dir, { mode: 0o700 });
    try {
      await refusedAtTheYes(dir, 1, () => remount('ro'), /read-only.*EROFS/);
    } finally {
      remount('rw');
    }
  });

  it('from the start (a fresh state directory on it): refused, nothing is sent', { timeout: 60_000 }, async () => {
    if (!disk) return;
    const dir = join(disk.path, 'fresh');
    remount('ro');
    try {
      const server = await launch(dir, 'none');
      try {
        const before = sends();
        const sent = await call(server, { params: params(2) });
        expect(sent.isError, textOf(sent)).toBe(true);
        expect(textOf(sent)).toMatch(/read-only|EROFS/);
        expect(sends()).toBe(before);
      } finally {
        await server.close();
      }
    } finally {
      remount('rw');
    }
  });

  it('from while the confirmed send is at the API: the answer says it was carried out, and a repeat is not sent again', { timeout: 60_000 }, async () => {
    if (!disk) return;
    const dir = join(disk.path, 'during');
    mkdirSync(dir, { mode: 0o700 });
    const server = await launch(dir);
    try {
      const preview = await call(server, { params: params(3) });
      const first = sends();
      const { held } = proxy.hold('arrival');
      const yes = call(server, { params: params(3), confirmationToken: structuredOf(preview).confirmationToken });
      const send = await held;
      remount('ro');
      await send.forward();
      const answer = await yes;
      expect(structuredOf(answer).outcome, textOf(answer)).toBe('done');
      const before = sends();
      expect(before).toBe(first + 1);
      const again = await call(server, { params: params(3) });
      expect(textOf(again)).toMatch(/already sent exactly this channel\.whatsapp\.send .*, and it was carried out|read-only/);
      const token = structuredOf(again).confirmationToken as string | undefined;
      if (token) {
        const second = await call(server, { params: params(3), confirmationToken: token });
        expect(second.isError, textOf(second)).toBe(true);
        expect(textOf(second)).toMatch(/read-only/);
      }
      expect(sends()).toBe(before);
    } finally {
      remount('rw');
      await server.close();
    }
  });
});

describe('state files replaced between the preview and the yes', () => {
  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    [
      'state.json by a folder',
      (dir) => {
        rmSync(join(dir, 'state.json'), { force: true });
        mkdirSync(join(dir, 'state.json'));
      },
      /state\.json/,
    ],
    [
      'state.json by a FIFO',
      (dir) => {
        rmSync(join(dir, 'state.json'), { force: true });
        fifo(join(dir, 'state.json'));
      },
      /state\.json/,
    ],
    ['state.json cut short', (dir) => writeFileSync(join(dir, 'state.json'), '{"counters":{"messages:', { mode: 0o600 }), /state\.json is damaged/],
    [
      'writes/ by a file',
      (dir) => {
        rmSync(join(dir, 'writes'), { recursive: true, force: true });
        writeFileSync(join(dir, 'writes'), '', { mode: 0o600 });
      },
      /writes is not a directory/,
    ],
    [
      'audit.jsonl by a folder',
      (dir) => {
        rmSync(join(dir, 'audit.jsonl'), { force: true });
        mkdirSync(join(dir, 'audit.jsonl'));
      },
      /audit\.jsonl/,
    ],
  ];
  for (const [what, replace, why] of cases)
    it(`${what}: refused, naming it; nothing is sent`, { timeout: 60_000 }, async () => {
      const dir = stateDir();
      // A send first, so every state file is there to be replaced.
      const warm = await launch(dir, 'none');
      expect(structuredOf(await call(warm, { params: params(100), idempotencyKey: 'warm' })).outcome).toBe('done');
      await warm.close();
      await refusedAtTheYes(dir, 10 + cases.findIndex(([name]) => name === what), () => replace(dir), why);
    });

  it('audit.key by a FIFO: a new server refuses every write before sending, naming it; one that read it before goes on, its audit line written', {
    timeout: 60_000,
  }, async () => {
    const dir = stateDir();
    const warm = await launch(dir, 'none');
    expect(structuredOf(await call(warm, { params: params(40) })).outcome).toBe('done');
    await warm.close();
    const lines = () => readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').length;
    const running = await launch(dir);
    try {
      const preview = await call(running, { params: params(41) });
      rmSync(join(dir, 'audit.key'));
      fifo(join(dir, 'audit.key'));
      const fresh = await launch(dir);
      try {
        const before = sends();
        const refused = await call(fresh, { params: params(42) });
        expect(refused.isError, textOf(refused)).toBe(true);
        expect(textOf(refused)).toMatch(/audit\.key is not a regular file.*Nothing was sent/);
        expect(sends()).toBe(before);
      } finally {
        await fresh.close();
      }
      const written = lines();
      const yes = await call(running, { params: params(41), confirmationToken: structuredOf(preview).confirmationToken });
      expect(structuredOf(yes).outcome, textOf(yes)).toBe('done');
      expect(lines(), running.stderr()).toBe(written + 1);
    } finally {
      await running.close();
    }
  });

  it("the write's own entry in writes/ by a folder, then by a FIFO: the yes to the same write again is refused, nothing is sent", {
    timeout: 60_000,
  }, async () => {
    const dir = stateDir();
    const server = await launch(dir);
    try {
      for (const plant of [(path: string) => mkdirSync(path), fifo]) {
        const preview = await call(server, { params: params(30) });
        const sent = await call(server, { params: params(30), confirmationToken: structuredOf(preview).confirmationToken });
        expect(sent.isError, textOf(sent)).toBeFalsy();
        const again = await call(server, { params: params(30) });
        const [file] = readdirSync(join(dir, 'writes'));
        rmSync(join(dir, 'writes', file!), { recursive: true, force: true });
        plant(join(dir, 'writes', file!));
        const before = sends();
        const yes = await call(server, { params: params(30), confirmationToken: structuredOf(again).confirmationToken });
        expect(yes.isError, textOf(yes)).toBe(true);
        expect(textOf(yes)).toMatch(/writes/);
        expect(sends(), textOf(yes)).toBe(before);
        rmSync(join(dir, 'writes', file!), { recursive: true, force: true });
      }
    } finally {
      await server.close();
    }
  });
});
