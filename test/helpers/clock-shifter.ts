// A preload that sets a server's system clock (Date.now) off by the milliseconds a file holds, read
// at every call: a test moves the clock of a running server (or replica) as NTP would. With
// `sinceBoot`, the time since boot (os.uptime, the state directory's steady clock) moves too: as
// every clock of the machine reads after a process was paused (SIGSTOP) or the machine slept.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SHIFT_DATE = `const { readFileSync } = require('node:fs');
const shift = () => Number(readFileSync(process.env.ENGAGE_TEST_SHIFT_FILE, 'utf8'));
const real = Date.now;
Date.now = () => real() + shift();`;

// ES modules read node:os through bindings synced from its CommonJS exports on request.
const SHIFT_UPTIME = `
const os = require('node:os');
const realUptime = os.uptime;
os.uptime = () => realUptime() + shift() / 1000;
require('node:module').syncBuiltinESMExports();`;

/** `folder`: where the preload and the shift's file are written (the test's own temporary folder). */
export function clockShifter(folder: string, options: { sinceBoot?: boolean } = {}): { env: Record<string, string>; set: (ms: number) => void } {
  const shiftFile = join(folder, `shift-${Math.random().toString(36).slice(2)}`);
  const preload = join(folder, options.sinceBoot ? 'shift-clocks.cjs' : 'shift-clock.cjs');
  writeFileSync(preload, options.sinceBoot ? SHIFT_DATE + SHIFT_UPTIME : SHIFT_DATE);
  const set = (ms: number) => writeFileSync(shiftFile, String(ms));
  set(0);
  return { env: { NODE_OPTIONS: `--require ${preload}`, ENGAGE_TEST_SHIFT_FILE: shiftFile }, set };
}
