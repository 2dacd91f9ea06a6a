// A built script run with no home folder to be found, as a container under an arbitrary uid runs
// it: as root, another uid without a passwd entry (setpriv); elsewhere, os.homedir() made to throw
// what Node throws then. The SDK's stdio transport passes HOME on whatever env it is given, so
// env(1) takes the named variables out.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
