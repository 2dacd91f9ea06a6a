// A small disk of its own (a tmpfs mounted on a folder) that a test fills, for what a full disk does
// to the stdio servers' state directory. Mounting needs root (as in CI's container); elsewhere
// `smallDisk` answers undefined and the tests that need it are skipped.
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, fstatSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface SmallDisk {
  path: string;
  /** Fills it to the last byte, then frees `pages` pages of 4 KiB (tmpfs counts whole pages). */
  fill(pages?: number): void;
  /** Frees what fill took. */
  free(): void;
  unmount(): void;
}

export function smallDisk(path: string, size = '1m'): SmallDisk | undefined {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  try {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined;
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', path], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const filler = join(path, 'filler');
  return {
    path,
    fill(pages = 0) {
      const fd = openSync(filler, 'w');
      const block = Buffer.alloc(4096, 1);
      try {
        for (;;) if (writeSync(fd, block) < block.length) break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
      const size = fstatSync(fd).size;
      ftruncateSync(fd, Math.max(0, size - (size % 4096) - pages * 4096));
      closeSync(fd);
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', path], { stdio: 'ignore' });
    },
  };
}
