// Reading a file setup did not make (the person's config, a lock or backup beside it) without
// waiting on it: a FIFO at that path would hold a plain read until something wrote to it, and a
// device or socket is no config either. Opened without blocking, it is refused unless it is a
// regular file. Links are followed: a config is often a dotfiles link (files.ts checks whose).
import { constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { ConfigRefused } from './config-error.js';

// Windows has no O_NONBLOCK (nor FIFOs at a path): there the open is a plain one.
const NO_WAIT = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** The file's bytes; throws ENOENT, EISDIR and the like as readFile does, ConfigRefused for what is not a regular file. */
export async function readRegular(path: string): Promise<Buffer> {
  const handle = await open(path, NO_WAIT);
  try {
    const found = await handle.stat();
    // As readFile says it, so the caller's own words for a folder stand.
    if (found.isDirectory()) throw Object.assign(new Error(`EISDIR: ${path} is a folder`), { code: 'EISDIR' });
    if (!found.isFile()) throw new ConfigRefused(`${path} is ${kindOf(found)}, not a file; nothing was changed. ${MOVE_ASIDE}`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

const MOVE_ASIDE = 'Move it aside (no host or setup makes one there), then run again.';

function kindOf(found: Stats): string {
  if (found.isFIFO()) return 'a named pipe (FIFO)';
  if (found.isSocket()) return 'a socket';
  if (found.isCharacterDevice() || found.isBlockDevice()) return 'a device';
  return 'not a regular file';
}
