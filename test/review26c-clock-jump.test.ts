// Review 26c: the system clock set forward. Idempotency records expired by the system clock alone
// (`expiresAt <= now`): a machine whose clock was days behind and is corrected forward (NTP), or a
// VM resumed, made a write done a minute ago look older than its 24 hours, so its record read as
// absent (and was swept), and the same write with the same key was sent again. Each entry now also
// keeps its expiry by a steady clock (on Linux, the time since boot, shared by every process of
// that boot; elsewhere the writing process's monotonic clock) and is live while either clock says
// so. Records still expire as before when the steady clock has really advanced (the server off for
// two days, the machine on or asleep), after a reboot (by the system clock: nothing else is known),
// and files of the earlier format expire by the system clock as they did.
// A confirmed write in flight (its mark renewed every minute, an unknown outcome once not renewed
// for 3 minutes) read as stopped after the same jump, so another server let a yes given after the
// jump send the same write while the first was still at the API; its lease now counts by the
// steady clock it was renewed by too.
// A server in a Linux time namespace (a container restored by CRIU, or started with
// `unshare --time --boottime`) reads the time since boot set off by its namespace's offset: one set
// two days ahead read every record of that boot as two days older, so after the same jump it sent
// the write again. The offset is now taken off, and every process of a boot reads one clock.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type SteadyClock, systemSteadyClock } from '../shared/src/call/process-place.js';
import { GuardStateError } from '../shared/src/call/guard-store.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';
import { clockShifter } from './helpers/clock-shifter.js';

const { root, sandbox, stateDir, params, sends } = stateDirFixture('review26c-clock', '62812661');

const DAY = 24 * 60 * 60_000;
const record = (at: number) => ({ operationId: 'channel.whatsapp.send', digest: 'd', at });

describe('the system clock set forward three days (NTP correcting a clock that was behind)', () => {
  it('while the server runs: the same write with the same key is not sent again', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const clock = clockShifter(root);
    clock.set(-3 * DAY);
    const server = await launchChannel(sandbox(), dir, 'none', clock.env);
    try {
      const before = sends();
      const sent = await callSend(server, { params: params(1), idempotencyKey: 'jump-while-running' });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
      clock.set(0); // the clock is corrected: the write, a moment old, now reads three days old
      const again = await callSend(server, { params: params(1), idempotencyKey: 'jump-while-running' });
      expect(textOf(again)).toMatch(/nothing was sent again/);
      expect(sends()).toBe(before + 1);
      expect(readdirSync(join(dir, 'records'))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('a server started after the correction (a restart, or another of the seven): not sent again', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    const behind = clockShifter(root);
    behind.set(-3 * DAY);
    const before = sends();
    const first = await launchChannel(sandbox(), dir, 'none', behind.env);
    try {
      const sent = await callSend(first, { params: params(2), idempotencyKey: 'jump-then-restart' });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
    } finally {
      await first.close();
    }
    const later = await launchChannel(sandbox(), dir);
    try {
      const again = await callSend(later, { params: params(2), idempotencyKey: 'jump-then-restart' });
      expect(textOf(again)).toMatch(/nothing was sent again/);
      expect(sends()).toBe(before + 1);
    } finally {
      await later.close();
    }
  });
});

describe('records still expire', () => {
  /** A system clock and a steady clock the test moves; `boot` names the steady clock's span. */
  function clocks(start: number) {
    const at = { now: start, steady: 1_000_000, boot: 'boot a' };
    const steady: SteadyClock = () => ({ clock: at.boot, ms: at.steady });
    return { at, store: (dir: string) => new FileGuardStore(dir, undefined, () => at.now, steady) };
  }

  it('the system clock set forward with little steady time passed: live, and never swept; a day of steady time later: gone', async () => {
    const dir = stateDir();
    const { at, store } = clocks(Date.parse('2026-11-01T12:00:00Z'));
    const one = store(dir);
    expect(await one.reserve('k', record(at.now), at.now + DAY)).toBeUndefined();
    at.now += 3 * DAY;
    at.steady += 60_000;
    await one.take('c', 1, 10, at.now + DAY); // a turn, which sweeps
    expect(await one.lookup('k')).toMatchObject({ operationId: 'channel.whatsapp.send' });
    expect(await store(dir).reserve('k', record(at.now), at.now + DAY)).toMatchObject({ at: at.now - 3 * DAY });
    // Its first answer, settled after the jump, keeps the record's own expiry.
    await store(dir).settle('k', { content: [{ type: 'text', text: 'done' }] });
    at.steady += DAY - 60_000;
    at.now += 20 * 60_000;
    const later = store(dir);
    await later.take('c', 1, 10, at.now + DAY);
    expect(await later.lookup('k')).toBeUndefined();
    expect(readdirSync(join(dir, 'records'))).toEqual([]);
  });

  it("a record written before a reboot and answered after it: its expiry is kept by the new boot's clock, so a jump after the reboot does not expire it", async () => {
    const dir = stateDir();
    const { at, store } = clocks(Date.parse('2026-11-01T12:00:00Z'));
    await store(dir).reserve('k', record(at.now), at.now + DAY);
    at.boot = 'boot b'; // a reboot, an hour later
    at.steady = 30_000;
    at.now += 60 * 60_000;
    await store(dir).settle('k', { content: [{ type: 'text', text: 'done' }] });
    at.now += 3 * DAY; // then the clock is set forward
    at.steady += 60_000;
    expect(await store(dir).lookup('k')).toMatchObject({ reply: { content: [{ type: 'text', text: 'done' }] } });
    at.steady += DAY; // a day of the new boot later: gone
    expect(await store(dir).lookup('k')).toBeUndefined();
  });

  it('the server off for two days (the machine on, or rebooted): expired, and swept', async () => {
    for (const reboot of [false, true]) {
      const dir = stateDir();
      const { at, store } = clocks(Date.parse('2026-11-01T12:00:00Z'));
      await store(dir).reserve('k', record(at.now), at.now + DAY);
      at.now += 2 * DAY;
      if (reboot) at.boot = 'boot b';
      else at.steady += 2 * DAY;
      const started = store(dir);
      expect(await started.lookup('k'), `reboot ${reboot}`).toBeUndefined();
      await started.take('c', 1, 10, at.now + DAY);
      expect(readdirSync(join(dir, 'records')), `reboot ${reboot}`).toEqual([]);
      expect(await started.reserve('k', record(at.now), at.now + DAY)).toBeUndefined();
    }
  });

  it('a record of the earlier format (no steady expiry) expires by the system clock, as it did; a damaged steady expiry names its file', async () => {
    const dir = stateDir();
    const { at, store } = clocks(Date.parse('2026-11-01T12:00:00Z'));
    await store(dir).reserve('old', record(at.now), at.now + DAY);
    const [file] = readdirSync(join(dir, 'records'));
    const path = join(dir, 'records', file!);
    writeFileSync(path, JSON.stringify({ name: 'old', value: record(at.now), expiresAt: at.now + DAY }), { mode: 0o600 });
    at.now += DAY + 1;
    expect(await store(dir).lookup('old')).toBeUndefined();
    writeFileSync(path, JSON.stringify({ name: 'old', value: record(at.now), expiresAt: at.now + DAY, steady: { clock: at.boot, expiresAt: 'never' } }), {
      mode: 0o600,
    });
    await expect(store(dir).lookup('old')).rejects.toThrow(GuardStateError);
  });
});

describe('a confirmed write in flight when the system clock is set forward a day', () => {
  it("is still in flight for another server: the same write's claim is refused; not renewed for the lease by the steady clock, its outcome is unknown", async () => {
    const dir = stateDir();
    const at = { now: Date.parse('2026-11-01T12:00:00Z'), steady: 5_000_000 };
    const steady: SteadyClock = () => ({ clock: 'boot a', ms: at.steady });
    const store = () => new FileGuardStore(dir, undefined, () => at.now, steady);
    const marked = at.now;
    expect(await store().claimWrite('w', 'first', marked, marked)).toBeUndefined();
    at.now += DAY; // the clock set forward while the write is at the API
    at.steady += 30_000;
    expect(await store().lastSentWrite('w', at.now)).toEqual({ at: marked, outcome: 'in-flight' });
    // A yes given after the jump: the same write is refused while the first is out, not sent again.
    expect(await store().claimWrite('w', 'second', at.now, at.now)).toEqual({ at: marked, outcome: 'in-flight' });
    // Its server renews it, then stops: once the lease passes on both clocks, unknown.
    await store().renewWrite('w', 'first', at.now);
    at.now += 4 * 60_000;
    at.steady += 4 * 60_000;
    expect(await store().lastSentWrite('w', at.now)).toEqual({ at: marked, outcome: 'unknown' });
  });
});

/** Whether this machine lets the test start a process in a time namespace of its own. */
function canUnshareTime(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    execFileSync('unshare', ['--time', '--fork', '--boottime', '1', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.runIf(canUnshareTime())('a server in a time namespace two days ahead (a container restored by CRIU)', () => {
  it('reads a record written a moment ago, before the clock was set forward three days, as live (its repeat is answered, not sent)', {
    timeout: 60_000,
  }, async () => {
    const dir = stateDir();
    // Written by this process, its system clock three days behind.
    const behind = Date.now() - 3 * DAY;
    await new FileGuardStore(dir, undefined, () => behind, systemSteadyClock).reserve('k', record(behind), behind + DAY);
    // Read by a server whose clock is right, in a time namespace whose time since boot is two days ahead.
    const script = join(root, 'lookup.mts');
    const store = new URL('../shared/src/call/file-guard-store.ts', import.meta.url).pathname;
    writeFileSync(
      script,
      `import { FileGuardStore } from ${JSON.stringify(store)};
process.stdout.write(JSON.stringify((await new FileGuardStore(process.argv[2]).lookup('k')) ?? null));`,
    );
    const child = spawn('unshare', ['--time', '--fork', '--boottime', String(2 * 24 * 3600), process.execPath, '--import', 'tsx', script, dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ operationId: 'channel.whatsapp.send', at: behind });
  });
});
