// A preload that moves a server's system clock (Date.now) and its monotonic clock (performance.now)
// by what two files hold, read at every call: a test makes time pass for a running server, and sets
// its system clock as NTP would, with no waiting. For the review48-time tests.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `folder`: where the preload and its files are written (the test's own temporary folder). */
export function twoClocks(folder: string): { env: Record<string, string>; set: (wallMs: number, monotonicMs: number) => void } {
  const tag = Math.random().toString(36).slice(2);
  const wallFile = join(folder, `wall-shift-${tag}`);
  const monotonicFile = join(folder, `monotonic-shift-${tag}`);
  const preload = join(folder, `shift-both-${tag}.cjs`);
  writeFileSync(
    preload,
    `const { readFileSync } = require('node:fs');
const read = (file) => Number(readFileSync(file, 'utf8'));
const realNow = Date.now;
Date.now = () => realNow() + read(${JSON.stringify(wallFile)});
const realMonotonic = performance.now.bind(performance);
performance.now = () => realMonotonic() + read(${JSON.stringify(monotonicFile)});`,
  );
  const set = (wallMs: number, monotonicMs: number) => {
    writeFileSync(wallFile, String(wallMs));
    writeFileSync(monotonicFile, String(monotonicMs));
  };
  set(0, 0);
  return { env: { NODE_OPTIONS: `--require ${preload}` }, set };
}
