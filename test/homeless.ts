// A built script run with no home folder to be found, as a container under an arbitrary uid runs
// it: as root, another uid without a passwd entry (setpriv); elsewhere, os.homedir() made to throw
// what Node throws then. The SDK's stdio transport passes HOME on whatever env it is given, so
// env(1) takes the named variables out.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

/** What Node throws from os.homedir() when HOME is unset and getpwuid_r finds no user. */
const HOMELESS = `const os = require('node:os');
os.homedir = () => { const error = new Error('A system error occurred: uv_os_homedir returned ENOENT (no such file or directory)'); error.code = 'ERR_SYSTEM_ERROR'; throw error; };
`;

/** Whether a real homeless run is possible here: as root, with setpriv (else a preload stands in). */
export const hasSetpriv = (() => {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The arguments of `env` that run `node <script>` homeless, `unset` taken out of its environment and
 * `set` put in (a relative HOME, say); `scratch` holds the preload where one is needed.
 */
export function homelessArgs(script: string, scratch: string, unset: readonly string[], set: Record<string, string> = {}): string[] {
  const without = [...unset.flatMap((name) => ['-u', name]), ...Object.entries(set).map(([name, value]) => `${name}=${value}`)];
  if (hasSetpriv) return [...without, 'setpriv', '--reuid', '54321', '--regid', '54321', '--clear-groups', process.execPath, script];
  const preload = join(scratch, 'homeless.cjs');
  writeFileSync(preload, HOMELESS);
  return [...without, process.execPath, '--require', preload, script];
}

/**
 * The sandbox, and a scratch folder any uid may use (a homeless run's working folder, and its
 * preload), for one test file (its own hooks): read `sandbox` and `dir` in tests.
 */
export function homelessRigPerFile(prefix: string): { readonly sandbox: Sandbox; readonly dir: string } {
  const rig = {} as { sandbox: Sandbox; dir: string };
  beforeAll(async () => {
    rig.sandbox = await startSandbox();
    rig.dir = mkdtempSync(join(tmpdir(), prefix));
    chmodSync(rig.dir, 0o777);
  });
  afterAll(async () => {
    await rig.sandbox?.close();
    if (rig.dir) rmSync(rig.dir, { recursive: true, force: true });
  });
  return rig;
}
