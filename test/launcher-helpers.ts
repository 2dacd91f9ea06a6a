// Helpers of the launcher's tests (scripts/launcher.ts). Each start runs in its own process, as a
// host's does: in one process V8 keeps a compiled script in memory and never looks at the cache.
import { mkdtempSync } from 'node:fs';
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
