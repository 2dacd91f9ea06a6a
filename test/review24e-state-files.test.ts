// Review 24e: the file store's layout of one file per entry (records/, writes/), attacked as a
// process of the earlier version still running beside the new one, a damaged entry file and a
// full disk would.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
const root = mkdtempSync(join(tmpdir(), 'review24e-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

let made = 0;
const stateDir = () => mkdtempSync(join(root, `dir-${++made}-`));
const SEND = 'channel.whatsapp.send';
const params = (n: number) => ({ msisdn: `62812777${String(n).padStart(5, '0')}`, message: `Halo ${n}` });
const sends = () => countCarriedOut(sandbox, SEND);
const files = (dir: string, kind: string) => (existsSync(join(dir, kind)) ? readdirSync(join(dir, kind)) : []);
const channelOn = (dir: string, store = new FileGuardStore(dir)) =>
  inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => store } });

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
