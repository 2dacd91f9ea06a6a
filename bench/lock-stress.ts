// `tsx bench/lock-stress.ts`: a stress probe of the state folder's lock (shared/src/call/state-lock.ts).
// Worker processes take the lock in turn on one folder; each turn creates an "occupied" marker with
// O_EXCL, so a second turn at once is seen (an overlap). Now and then a worker ends its turn by
// leaving a lock of a dead process in place of its own (a server killed mid-turn), so the others
// break stale locks all the time. --pause-ms N pauses each breaker for N ms just before and just
// after it moves the lock, and after each step of the breakers' own turn (its entry linked into
// `state.lock.break`, that folder listed): fs patched in the worker process only, no setting of the
// servers. It widens the windows between a breaker's last read, its move, and what it does after. Prints one JSON line: turns, overlaps, turns refused (locked out), stale locks planted, files
// left, and CPU per turn.
//
//   npx tsx bench/lock-stress.ts [--workers 6] [--turns 400] [--stale-share 0.1] [--pause-ms 5] [--work-ms 0]
//
// --turns is per worker. --stale-share 0 --pause-ms 0 --workers 1 measures what an uncontended turn
// costs (CPU time per turn, user+system, in µs).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '6' },
    turns: { type: 'string', default: '400' },
    'stale-share': { type: 'string', default: '0.1' },
    'pause-ms': { type: 'string', default: '5' },
    'work-ms': { type: 'string', default: '0' },
    worker: { type: 'string' },
  },
});

interface Tally {
  turns: number;
  overlaps: number;
  planted: number;
  cpuMicros: number;
  /** Turns refused after waiting 10 s (a lock left in place by a live process that thought it released it): this worker stops. */
  lockedOut: number;
}

/** Blocks this process (a synchronous pause, as a descheduled breaker is paused). */
function pause(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Patches fs in this process so that each move of the lock file is paused around, and so is each
 * step of the breakers' own turn (an entry linked into `<lock>.break`, that folder listed).
 */
function pauseBreakers(lockPath: string, ms: number): void {
  if (ms <= 0) return;
  const cjsFs = createRequire(import.meta.url)('node:fs') as typeof fs;
  const { renameSync, linkSync, readdirSync } = cjsFs;
  const breakFolder = `${lockPath}.break`;
  cjsFs.renameSync = (from: fs.PathLike, to: fs.PathLike) => {
    const moving = String(from) === lockPath;
    if (moving) pause(ms);
    renameSync(from, to);
    if (moving) pause(ms);
  };
  cjsFs.linkSync = (from: fs.PathLike, to: fs.PathLike) => {
    linkSync(from, to);
    if (String(to).startsWith(`${breakFolder}/`)) pause(ms);
  };
  cjsFs.readdirSync = ((folder: fs.PathLike, options?: unknown) => {
    const names = readdirSync(folder, options as undefined);
    if (String(folder) === breakFolder) pause(ms);
    return names;
  }) as typeof fs.readdirSync;
  syncBuiltinESMExports();
}

async function worker(dir: string): Promise<void> {
  const lockPath = join(dir, 'state.lock');
  const marker = join(dir, 'occupied');
  pauseBreakers(lockPath, Number(values['pause-ms']));
  const { lock } = await import('../shared/src/call/state-lock.js');
  const { ownStartAndPlace } = await import('../shared/src/call/process-place.js');
  const staleShare = Number(values['stale-share']);
  const workMs = Number(values['work-ms']);
  const tally: Tally = { turns: 0, overlaps: 0, planted: 0, cpuMicros: 0, lockedOut: 0 };
  const cpuBefore = process.cpuUsage();
  for (let turn = 0; turn < Number(values.turns); turn++) {
    let release: () => void;
    try {
      release = await lock(lockPath);
    } catch (error) {
      process.stderr.write(`${(error as Error).message}\n`);
      tally.lockedOut++;
      break;
    }
    tally.turns++;
    let mine = false;
    try {
      fs.closeSync(fs.openSync(marker, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY));
      mine = true;
    } catch {
      tally.overlaps++;
    }
    pause(workMs);
    if (mine) fs.unlinkSync(marker);
    if (Math.random() < staleShare) {
      // Killed mid-turn: a dead process's lock is left where this one's was (a pid no process has, named as this host's).
      const dead = `${lockPath}.${process.pid}.dead.tmp`;
      fs.writeFileSync(dead, `${2 ** 22 + 1} ${hostname()}${ownStartAndPlace()} ${randomBytes(6).toString('hex')}`, { mode: 0o600 });
      fs.renameSync(dead, lockPath);
      tally.planted++;
    } else release();
  }
  const cpu = process.cpuUsage(cpuBefore);
  tally.cpuMicros = cpu.user + cpu.system;
  process.stdout.write(`${JSON.stringify(tally)}\n`);
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(join(tmpdir(), 'lock-stress-'));
  const workers = Number(values.workers);
  const self = fileURLToPath(import.meta.url);
  const args = process.argv.slice(2);
  const started = performance.now();
  const tallies = await Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise<Tally>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', self, ...args, '--worker', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk;
          });
          child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as Tally) : reject(new Error(`a worker exited with ${code}`))));
        }),
    ),
  );
  const sum = (key: keyof Tally) => tallies.reduce((total, tally) => total + tally[key], 0);
  const left = fs.readdirSync(dir).filter((name) => name !== 'state.lock' && name !== 'state.lock.break');
  const breakLeft = fs.existsSync(join(dir, 'state.lock.break')) ? fs.readdirSync(join(dir, 'state.lock.break')) : [];
  fs.rmSync(dir, { recursive: true, force: true });
  const turns = sum('turns');
  console.log(
    JSON.stringify({
      workers,
      turns,
      overlaps: sum('overlaps'),
      lockedOut: sum('lockedOut'),
      planted: sum('planted'),
      filesLeft: left,
      breakEntriesLeft: breakLeft.length,
      cpuMicrosPerTurn: Math.round(sum('cpuMicros') / turns),
      seconds: Math.round((performance.now() - started) / 100) / 10,
    }),
  );
  if (sum('overlaps') > 0 || sum('lockedOut') > 0) process.exitCode = 1;
}

if (values.worker) await worker(values.worker);
else await main();
