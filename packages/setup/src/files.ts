// Reading a host's config file and replacing it safely: a backup of what was there, then the new
// text written beside it and renamed over it, so a crash never leaves half a file.
import { chmod, copyFile, constants, mkdir, readFile, realpath, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigRefused } from './config-error.js';

/** The file's text, or undefined when there is none yet. */
export async function readConfig(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigRefused(`${path} cannot be read (${code ?? (error as Error).message}); nothing was changed.`);
  }
}

export interface Written {
  /** The file written: a symlinked config is written where the link points, keeping the link. */
  path: string;
  backup?: string;
}

export async function replaceConfig(path: string, text: string, existed: boolean, now = new Date()): Promise<Written> {
  const target = existed ? await realpath(path) : path;
  await mkdir(dirname(target), { recursive: true });
  // The file holds an API key: a new one is readable by its owner only; an old one keeps its mode.
  const mode = existed ? (await stat(target)).mode & 0o777 : 0o600;
  let backup: string | undefined;
  if (existed) {
    backup = await backupOf(target, now);
    await chmod(backup, mode);
  }
  const temporary = `${target}.engage-setup-${process.pid}.tmp`;
  await writeFile(temporary, text, { mode });
  await chmod(temporary, mode);
  await rename(temporary, target);
  return { path: target, ...(backup ? { backup } : {}) };
}

/** `<file>.backup-20250101-120000`, never overwriting an earlier backup. */
async function backupOf(path: string, now: Date): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  for (let attempt = 1; ; attempt++) {
    const candidate = `${path}.backup-${stamp}${attempt > 1 ? `-${attempt}` : ''}`;
    try {
      await copyFile(path, candidate, constants.COPYFILE_EXCL);
      return candidate;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
