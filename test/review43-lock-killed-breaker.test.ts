// Review 43: breakers of a stale lock take turns (an entry each in `state.lock.break`, going on only
// when alone there). A breaker killed in its turn leaves its entry: the next breaker removes it (its
// process is gone; one of another host once it is 30 s old, as a lock is) and breaks the stale lock,
// so no turn is lost for good, and the processes waiting then still take their turns one at a time.
// Here a real process is stopped just as it moves the stale lock aside (inside its turn), then killed.
// A breaker stopped in its turn and left alive holds the others back (a live process's entry is never
// removed, as its lock would not be): the write that waited its 10 s is refused naming that breaker
// to stop, not the process that is gone (whose pid the user could not stop).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { lock } from '../shared/src/call/state-lock.js';
import { ownStartAndPlace } from '../shared/src/call/process-place.js';

const root = mkdtempSync(join(tmpdir(), 'review43-killed-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** A lock (or entry) of a process that is gone: a pid no process can have (above Linux's highest), named as this host's. */
const deadOwner = () => `${2 ** 22 + 1} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`;

/** A process that breaks the stale lock at `path` and stops for good as it moves it aside; resolves once it has stopped there. */
async function breakerStoppedInItsTurn(path: string): Promise<ChildProcess> {
  const script = join(root, 'breaker.mts');
  writeFileSync(
    script,
    `import { createRequire, syncBuiltinESMExports } from 'node:module';
const fs = createRequire(import.meta.url)('node:fs');
const renameSync = fs.renameSync;
fs.renameSync = (from, to) => {
  if (String(from) === process.argv[2]) {
    process.stdout.write('breaking\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  }
  return renameSync(from, to);
};
syncBuiltinESMExports();
const { lock } = await import(${JSON.stringify(new URL('../shared/src/call/state-lock.ts', import.meta.url).pathname)});
await lock(process.argv[2]);`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => String(chunk).includes('breaking') && resolve());
    child.on('exit', (code) => reject(new Error(`the breaker exited (${code}) before its turn`)));
  });
  return child;
}

/** Turns of `count` processes (calls of lock(), each a live owner by its own nonce) at once; the most that held the lock together. */
async function turnsAtOnce(path: string, count: number): Promise<number> {
  let holding = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: count }, async () => {
      const release = await lock(path);
      most = Math.max(most, ++holding);
      await new Promise((resolve) => setTimeout(resolve, 20));
      holding--;
      release();
    }),
  );
  return most;
}

describe('a breaker killed in its turn', () => {
  it('its entry is removed by the next breaker, the stale lock broken, and the waiting processes take their turns one at a time', async () => {
    const dir = join(root, 'killed');
    mkdirSync(dir);
    const path = join(dir, 'state.lock');
    writeFileSync(path, deadOwner(), { mode: 0o600 });
    const breaker = await breakerStoppedInItsTurn(path);
    // Its entry holds the breakers' turn: the stale lock is still there, not yet moved.
    expect(readdirSync(`${path}.break`)).toHaveLength(1);
    expect(readdirSync(dir)).toContain('state.lock');
    breaker.kill('SIGKILL');
    await new Promise((resolve) => breaker.on('exit', resolve));

    expect(await turnsAtOnce(path, 3)).toBe(1);
    expect(readdirSync(`${path}.break`)).toEqual([]);
    expect(readdirSync(dir).filter((file) => file.endsWith('.tmp') || file.includes('.stale-'))).toEqual([]);
  });

  it("another host's breaker's entry holds the breakers back until it is 30 s old, as its lock would", async () => {
    const dir = join(root, 'other-host');
    mkdirSync(`${join(dir, 'state.lock')}.break`, { recursive: true });
    const path = join(dir, 'state.lock');
    writeFileSync(path, deadOwner(), { mode: 0o600 });
    const entry = join(`${path}.break`, 'a1b2c3d4e5f60708');
    writeFileSync(entry, `4242 another-host.example ${randomBytes(6).toString('hex')}`, { mode: 0o600 });
    const halfMinuteAgo = new Date(Date.now() - 31_000);
    utimesSync(entry, halfMinuteAgo, halfMinuteAgo);

    expect(await turnsAtOnce(path, 2)).toBe(1);
    expect(readdirSync(`${path}.break`)).toEqual([]);
  });

  it('a breaker stopped in its turn, alive: the waiting write is refused naming it as the process to stop', async () => {
    const dir = join(root, 'stopped');
    mkdirSync(dir);
    const path = join(dir, 'state.lock');
    writeFileSync(path, deadOwner(), { mode: 0o600 });
    const breaker = await breakerStoppedInItsTurn(path);
    const refused = await lock(path).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toContain(
      `process ${2 ** 22 + 1} of this host (${path}), which is gone, and process ${breaker.pid} of this host has been breaking that lock`,
    );
    expect(readdirSync(dir)).toContain('state.lock');
  }, 30_000);
});
