// A preload that sets a server's system clock (Date.now) off by the milliseconds a file holds, read
// at every call: a test moves the clock of a running server (or replica) as NTP would.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `folder`: where the preload and the shift's file are written (the test's own temporary folder). */
export function clockShifter(folder: string): { env: Record<string, string>; set: (ms: number) => void } {
  const shiftFile = join(folder, `shift-${Math.random().toString(36).slice(2)}`);
  const preload = join(folder, 'shift-clock.cjs');
  writeFileSync(
    preload,
    `const { readFileSync } = require('node:fs');
const real = Date.now;
Date.now = () => real() + Number(readFileSync(process.env.ENGAGE_TEST_SHIFT_FILE, 'utf8'));`,
  );
  const set = (ms: number) => writeFileSync(shiftFile, String(ms));
  set(0);
  return { env: { NODE_OPTIONS: `--require ${preload}`, ENGAGE_TEST_SHIFT_FILE: shiftFile }, set };
}
