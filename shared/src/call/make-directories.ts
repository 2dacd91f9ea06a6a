// `mkdir -p` for the folders a server makes in the user's home (the state directory, the audit
// record's folder, the launcher's code cache), with nothing but node:fs and node:path, so the
// launcher can take it without the rest of the core.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Makes `dir` and the folders missing above it (0700), one level at a time. Node's recursive mkdir
 * never ends where mkdir answers ENOENT below a folder that exists (a folder named under /proc): it
 * makes the parent again (it exists), tries the child again, for ever, synchronously, and the server
 * stopped answering. Here that ENOENT, like any other failure, is thrown.
 */
export function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.unshift(at);
  for (const folder of missing) {
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      // Made meanwhile by another process: the caller judges it like any folder.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
