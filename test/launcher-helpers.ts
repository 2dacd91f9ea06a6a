// Helpers of the launcher's tests (scripts/launcher.ts). Each start runs in its own process, as a
// host's does: in one process V8 keeps a compiled script in memory and never looks at the cache.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/** `lines` (CommonJS, which may require('./scripts/launcher.ts')) bundled into a script to run with node; returns its path. */
export function launcherScript(lines: string[], prefix = 'engage-launcher-'): string {
  const file = join(mkdtempSync(join(tmpdir(), prefix)), 'script.cjs');
  buildSync({
    stdin: { contents: lines.join('\n'), resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: file,
    logLevel: 'error',
  });
  return file;
}

/**
 * Lines that wait for the launch in `launched` to write its cache (or not), then print `json` (an
 * expression, may use `written`). The launcher's timer does not keep a process alive (a server's
 * stdin does): these wait for it.
 */
export function printWhenWritten(json: string): string[] {
  return ['const alive = setTimeout(() => {}, 10000);', `launched.written.then((written) => { clearTimeout(alive); console.log(JSON.stringify(${json})); });`];
}

/** A bundle like server.cjs: it notes that it ran and loads a sibling module with require(). */
export function bundle(): { dir: string; file: string; cacheDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'engage-launcher-'));
  const file = join(dir, 'server.cjs');
  writeFileSync(join(dir, 'lazy.cjs'), 'module.exports = { answer: 42 };\n');
  const body = Array.from({ length: 200 }, (_, index) => `function f${index}(x) { return x * ${index} + 1; }`).join('\n');
  writeFileSync(
    file,
    `#!/usr/bin/env node\n${body}\nglobalThis.__engageLauncherRuns = (globalThis.__engageLauncherRuns ?? 0) + 1;\nglobalThis.__engageLazy = require('./lazy.cjs').answer + f3(0) - 1;\nmodule.exports = { dirname: __dirname };\n`,
  );
  const cacheDir = join(dir, 'cache');
  mkdirSync(cacheDir, { mode: 0o700 });
  return { dir, file, cacheDir };
}
