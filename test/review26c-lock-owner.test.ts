// Review 26c: a lock whose owner died while its pid was given to another process. The lock named
// only the pid (and host), so it looked alive: every turn of every server waited on it and failed
// after 10 seconds ("locked by another process") until the lock was 30 seconds old. On Linux a lock
// now names its owner's start time too (/proc/<pid>/stat field 22), and one whose pid's process
// started at another time is broken at once; one whose process is its owner is still waited for.
// And a lock its live owner holds was broken once its file time was 30 s old by the system clock: a
// clock set forward while it was held, or a turn slowed that long by its disk, let a second process
// take it while the first still wrote (two turns at once: the same idempotency key reserved by both,
// the write sent twice). A lock whose owner is alive on this host (its start time the same) is now
// never broken by its age; a turn that waited its 10 s is refused naming the process that holds it.
// A lock also names where its pid means it (boot and pid namespace): one from a container in another
// pid namespace, with the same host name, named a pid this process looked up in its own namespace,
// and a stranger there with another start time would have had the lock broken while it was held.
// A lock of this host's earlier boot (left by a power loss mid-turn) names a process gone with that
// boot, whatever its pid is now: broken at once, not after 30 s of refused writes.
import { type ChildProcess, spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';

const { sandbox, stateDir, params, sends, takerScript } = stateDirFixture('review26c-lock', '62812662');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A live process of another program: the pid a dead owner's lock names, given to it after. */
function liveStranger(): { pid: number; start: number } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  return { pid: child.pid!, start: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) };
}

/** Where this host's pids mean what they say, as a process of it names its lock (file-guard-store.ts placeOfPids: boot id and pid namespace). */
const place = (() => {
  const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);
  return `${digest(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim())}${digest(readlinkSync('/proc/self/ns/pid'))}`;
})();
/** A lock as a process of this host and pid namespace writes it (`pid host/start/place nonce`). */
const lockLine = (pid: number, start: number) => `${pid} ${hostname()}/${start}/${place} 0123456789ab`;

/** A turn on `dir` while the live `owner` holds `lock`: it waits (the lock left as it is), and takes its turn once the owner is gone. */
async function expectWaitedForOwner(dir: string, lock: string, owner: { pid: number; start: number }): Promise<void> {
  let settled = false;
  const turn = new FileGuardStore(dir).take('c', 1, 10, Date.now() + 60_000).finally(() => {
    settled = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(settled).toBe(false);
  expect(readFileSync(lock, 'utf8')).toBe(lockLine(owner.pid, owner.start));
  for (const child of children.splice(0)) child.kill('SIGKILL');
  expect(await turn).toEqual({ taken: true, count: 1 });
}

describe.runIf(process.platform === 'linux')('a lock naming a live pid that is not its owner', () => {
  it('with another start time: broken at once, the turn goes', { timeout: 30_000 }, async () => {
    const dir = stateDir();
    const stranger = liveStranger();
    writeFileSync(join(dir, 'state.lock'), lockLine(stranger.pid, stranger.start + 1), { mode: 0o600 });
    const store = new FileGuardStore(dir);
    expect(await store.take('c', 1, 10, Date.now() + 60_000)).toEqual({ taken: true, count: 1 });
    expect(existsSync(join(dir, 'state.lock'))).toBe(false);
  });

  it("of this host's earlier boot (a power loss mid-turn), its pid alive now with the same start time: broken at once", { timeout: 30_000 }, async () => {
    const dir = stateDir();
    const stranger = liveStranger();
    writeFileSync(join(dir, 'state.lock'), `${stranger.pid} ${hostname()}/${stranger.start}/0000000011111111 0123456789ab`, { mode: 0o600 });
    expect(await new FileGuardStore(dir).take('c', 1, 10, Date.now() + 60_000)).toEqual({ taken: true, count: 1 });
    expect(existsSync(join(dir, 'state.lock'))).toBe(false);
  });

  it('through the built server: the send goes, once', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const stranger = liveStranger();
    writeFileSync(join(dir, 'state.lock'), lockLine(stranger.pid, stranger.start + 7), { mode: 0o600 });
    const server = await launchChannel(sandbox(), dir);
    try {
      const before = sends();
      const sent = await callSend(server, { params: params(1), idempotencyKey: 'after-reused-pid' });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
    } finally {
      await server.close();
    }
  });

  it('with its own start time (the owner, alive): waited for while it lives, taken once it is gone', { timeout: 30_000 }, async () => {
    const dir = stateDir();
    const owner = liveStranger();
    const lock = join(dir, 'state.lock');
    writeFileSync(lock, lockLine(owner.pid, owner.start), { mode: 0o600 });
    await expectWaitedForOwner(dir, lock, owner);
  });
});

describe.runIf(process.platform === 'linux')('a lock its owner, alive on this host, holds', () => {
  it('its file an hour old by the system clock (the clock set forward since, or a slow disk): waited for, not broken', { timeout: 30_000 }, async () => {
    const dir = stateDir();
    const owner = liveStranger();
    const lock = join(dir, 'state.lock');
    writeFileSync(lock, lockLine(owner.pid, owner.start), { mode: 0o600 });
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    utimesSync(lock, hourAgo, hourAgo);
    await expectWaitedForOwner(dir, lock, owner);
  });

  it('held past the wait (its process stuck): the send is refused naming that process, nothing is sent', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const owner = liveStranger();
    writeFileSync(join(dir, 'state.lock'), lockLine(owner.pid, owner.start), { mode: 0o600 });
    const server = await launchChannel(sandbox(), dir);
    try {
      const before = sends();
      const refused = await callSend(server, { params: params(3), idempotencyKey: 'held-by-stuck' });
      expect(refused.isError, textOf(refused)).toBe(true);
      expect(textOf(refused)).toMatch(new RegExp(`locked by process ${owner.pid} of this host .*state\\.lock.*stop it.*Nothing was sent`));
      expect(sends()).toBe(before);
    } finally {
      await server.close();
    }
  });
});

/** Whether this machine lets the test start a process in a pid namespace of its own (root, or user namespaces). */
function canUnshare(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    execFileSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.runIf(canUnshare())('servers in two pid namespaces (containers) with one host name sharing the folder', () => {
  /** A real process taking a counter `turns` times, in a pid namespace of its own if `apart`. */
  function taker(dir: string, turns: number, apart: boolean): Promise<number> {
    const script = takerScript();
    const node = [process.execPath, '--import', 'tsx', script, dir, String(turns)];
    const [command, ...args] = apart ? ['unshare', '--pid', '--fork', '--mount-proc', ...node] : node;
    const child = spawn(command!, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
  }

  it('a lock names where its pid means it, and is not looked up elsewhere: every turn counted once', { timeout: 120_000 }, async () => {
    const dir = stateDir();
    // Inside its namespace a taker is pid 1, which outside is init (another start time); outside pids do not exist inside.
    const codes = await Promise.all([taker(dir, 150, true), taker(dir, 150, true), taker(dir, 150, false), taker(dir, 150, false)]);
    expect(codes).toEqual([0, 0, 0, 0]);
    expect(await new FileGuardStore(dir).count('c')).toBe(600);
    expect(readdirSync(dir).filter((file) => file.startsWith('state.lock'))).toEqual([]);
  });
});
