// Review 24e: the file store's layout of one file per entry (records/, writes/), attacked as a
// process of the earlier version still running beside the new one, a damaged entry file and a
// full disk would.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { launchServer, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { SEND, stateDirFixture } from './state-dir-fixture.js';
import { structuredOf, textOf, toolOf } from './helpers.js';

const { root, sandbox, stateDir, params, sends, files, channelOn } = stateDirFixture('review24e', '62812777');

interface EntryFile {
  name: string;
  value: unknown;
  expiresAt: number;
}

/**
 * What a process of the earlier version does for a write with an idempotency key: it reserves the
 * key in state.json (its only place for records), read and rewritten whole. The entry is the one
 * the new version wrote for the same key in `scratch` (the names are the same in both versions).
 */
function reserveAsEarlierVersion(dir: string, scratch: string): EntryFile {
  const [file] = files(scratch, 'records');
  const entry = JSON.parse(readFileSync(join(scratch, 'records', file!), 'utf8')) as EntryFile;
  const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as Record<string, unknown>;
  const records = { ...(state.records as object), [entry.name]: { value: entry.value, expiresAt: entry.expiresAt } };
  writeFileSync(join(dir, 'state.json'), JSON.stringify({ ...state, records }), { mode: 0o600 });
  return entry;
}

describe('a process of the earlier version still running beside an upgraded one', () => {
  it("a key it reserved in state.json after the upgraded process's first write still holds there: the repeat sends nothing", async () => {
    // The same key's entry, as any version names it, learnt from a server on a scratch folder.
    const scratch = stateDir();
    const learn = await channelOn(scratch);
    expect(structuredOf(await learn.call(SEND, params(1), { idempotencyKey: 'order-1' })).outcome).toBe('done');
    await learn.close();

    // Both processes share one state folder, so one audit secret (it keys the entries' names).
    const dir = stateDir();
    copyFileSync(join(scratch, 'audit.key'), join(dir, 'audit.key'));
    const upgraded = await channelOn(dir);
    try {
      // The upgraded process has written once (its one look at state.json's old entries is over).
      expect(structuredOf(await upgraded.call(SEND, params(2), { idempotencyKey: 'order-2' })).outcome).toBe('done');
      // Then an earlier version's process, not yet restarted, sends order-1 and keeps its record in state.json.
      reserveAsEarlierVersion(dir, scratch);
      const before = sends();
      const again = await upgraded.call(SEND, params(1), { idempotencyKey: 'order-1' });
      expect(textOf(again)).toMatch(/first answer is repeated below, and nothing was sent again/);
      expect(sends()).toBe(before);
    } finally {
      await upgraded.close();
    }
  });
});

/** Adds entries to state.json as a process of the earlier version writes them. */
function addLegacy(dir: string, kind: 'records' | 'writes', entries: Record<string, { value: unknown; expiresAt: number }>): void {
  const path = join(dir, 'state.json');
  const state = (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {}) as Record<string, Record<string, unknown>>;
  writeFileSync(path, JSON.stringify({ ...state, [kind]: { ...state[kind], ...entries } }), { mode: 0o600 });
}

describe("state.json's old entries meeting the new files", () => {
  it('a damaged entry file whose name state.json also holds refuses only its own write, not every turn of every write', async () => {
    const dir = stateDir();
    const now = Date.now();
    const store = new FileGuardStore(dir);
    const record = { operationId: SEND, digest: 'd', at: now };
    await store.reserve('damaged', record, now + 60_000);
    const [file] = files(dir, 'records');
    writeFileSync(join(dir, 'records', file!), '');
    addLegacy(dir, 'records', { damaged: { value: record, expiresAt: now + 60_000 } });

    const other = new FileGuardStore(dir);
    await expect(other.lookup('damaged')).rejects.toThrow(/is damaged/);
    expect(await other.reserve('fine', record, now + 60_000)).toBeUndefined();
    expect(await other.take('counter', 1, 10, now + 60_000)).toEqual({ taken: true, count: 1 });
    expect(await other.lookup('fine')).toEqual(record);
  });

  it("a confirmed write an earlier version's process marked in flight in state.json, after the file's last attempt, is still in flight: no second claim", async () => {
    const dir = stateDir();
    const now = Date.now();
    const store = new FileGuardStore(dir);
    expect(await store.claimWrite('w', 'new-process', now - 60_000, now - 60_000)).toBeUndefined();
    await store.settleWrite('w', 'new-process', 'done');
    // A process of the earlier version, which reads only state.json, is confirmed and sends it again.
    addLegacy(dir, 'writes', {
      w: { value: { at: now - 1_000, outcome: 'in-flight', owner: 'old-process', alive: now - 1_000 }, expiresAt: now + 30 * 60_000 },
    });
    // Meanwhile the user says yes to the same write on an upgraded process: the old process's send is still on its way.
    expect(await store.claimWrite('w', 'other-process', now - 30_000, now)).toEqual({ at: now - 1_000, outcome: 'in-flight' });
  });
});

describe('seven server processes on one state folder (its path with a space and letters outside ASCII)', () => {
  const launch = async (dir: string, confirm: string) =>
    Promise.all(
      Array.from({ length: 7 }, () =>
        launchServer('channel', { ENGAGE_BASE_URL: sandbox().baseUrl, ENGAGE_API_KEY: sandbox().keys.full, ENGAGE_STATE_DIR: dir, ENGAGE_CONFIRM: confirm }),
      ),
    );
  const call = (server: LaunchedServer, args: Record<string, unknown>) =>
    server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, ...args } }) as Promise<CallToolResult>;

  it('the same idempotency key sent by all seven at once is carried out once, each round; every process then answers the first answer', async () => {
    const dir = join(stateDir(), 'état des envois');
    const servers = await launch(dir, 'none');
    try {
      for (let round = 0; round < 4; round++) {
        const before = sends();
        const answers = await Promise.all(servers.map((server) => call(server, { params: params(400 + round), idempotencyKey: `burst-${round}` })));
        expect(sends() - before, answers.map(textOf).join('\n')).toBe(1);
        const again = await Promise.all(servers.map((server) => call(server, { params: params(400 + round), idempotencyKey: `burst-${round}` })));
        for (const answer of again) expect(textOf(answer)).toMatch(/first answer is repeated below, and nothing was sent again/);
        expect(sends() - before).toBe(1);
      }
      expect(files(dir, 'records')).toHaveLength(4);
      expect(readdirSync(dir).filter((file) => file.endsWith('.tmp') || file.includes('.stale-'))).toEqual([]);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it('the same confirmed write, said yes to in all seven at once, is sent once', async () => {
    const dir = join(stateDir(), 'état des envois');
    const servers = await launch(dir, 'all');
    try {
      const tokens = await Promise.all(servers.map(async (server) => structuredOf(await call(server, { params: params(500) })).confirmationToken as string));
      const before = sends();
      const answers = await Promise.all(servers.map((server, n) => call(server, { params: params(500), confirmationToken: tokens[n] })));
      expect(sends() - before, answers.map(textOf).join('\n')).toBe(1);
      expect(answers.filter((answer) => structuredOf(answer).outcome === 'done')).toHaveLength(1);
      expect(files(dir, 'writes')).toHaveLength(1);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });
});

describe('a server process killed (SIGKILL) in the middle of its turns', () => {
  /** A process writing keys k-<from>, … (each reserved, then a counter taken) until it is killed; answers the numbers it finished. */
  async function writeUntilKilled(dir: string, from: number): Promise<number[]> {
    const script = join(root, 'writer.mts');
    const store = new URL('../shared/src/call/file-guard-store.ts', import.meta.url).pathname;
    writeFileSync(
      script,
      `import { FileGuardStore } from ${JSON.stringify(store)};
const store = new FileGuardStore(process.argv[2]);
for (let n = Number(process.argv[3]); ; n++) {
  await store.reserve('k-' + n, { operationId: 'x', digest: 'd', at: n }, Date.now() + 3_600_000);
  await store.take('c', 1, 1e9, Date.now() + 3_600_000);
  process.stdout.write(n + '\\n');
}`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script, dir, String(from)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.split('\n').length > 40 + Math.floor(Math.random() * 40)) resolve();
      }),
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    return out
      .split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
  }

  it('leaves no turn locked out, no entry half written and no record lost; what it left is swept', async () => {
    const dir = join(stateDir(), 'état des envois');
    const finished: number[] = [];
    // Each next process starts past the key the killed one was on.
    for (let kill = 0; kill < 3; kill++) finished.push(...(await writeUntilKilled(dir, (finished.at(-1) ?? -2) + 2)));
    // The files a crash leaves (temporary ones) are removed once older than any turn.
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const folder of [dir, join(dir, 'records'), join(dir, 'writes')])
      for (const file of readdirSync(folder)) if (file.endsWith('.tmp')) utimesSync(join(folder, file), hourAgo, hourAgo);
    // A crash while state.json itself was being replaced leaves one beside it.
    writeFileSync(join(dir, 'state.json.4242.abcd.tmp'), '{"coun', { mode: 0o600 });
    utimesSync(join(dir, 'state.json.4242.abcd.tmp'), hourAgo, hourAgo);

    const after = new FileGuardStore(dir);
    expect(await after.reserve('after', { operationId: 'x', digest: 'd', at: 0 }, Date.now() + 60_000)).toBeUndefined();
    // Every key a killed process finished is held, and none reads as damaged.
    for (const n of finished) expect(await after.lookup(`k-${n}`), `k-${n}`).toMatchObject({ at: n });
    // The key each was on when killed is held or free, its file whole: every entry file is one the store wrote.
    const names = files(dir, 'records').map((file) => (JSON.parse(readFileSync(join(dir, 'records', file), 'utf8')) as EntryFile).name);
    expect(names.length).toBeGreaterThanOrEqual(finished.length + 1);
    for (const name of names) await after.lookup(name);
    const left = [dir, join(dir, 'records'), join(dir, 'writes')].flatMap((folder) => readdirSync(folder).filter((file) => file.endsWith('.tmp')));
    expect(left).toEqual([]);
  });
});
