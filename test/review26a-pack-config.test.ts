// `npm run pack` on a shared machine: npm takes the nearest folder above its working folder with a
// package.json or node_modules/ for the project and reads that folder's .npmrc. The packer staged
// in the system's temporary folder, where anyone may put both: `dry-run=true` there made it report
// eight tarballs and write none. After `npm run build`.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';

const run = promisify(execFile);

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-pack-config-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('npm run pack under a temporary folder someone else prepared', () => {
  it('is not steered by an .npmrc above its staging folder: the eight tarballs are written', async () => {
    const planted = join(work, 'tmp');
    await mkdir(join(planted, 'node_modules'), { recursive: true });
    await writeFile(join(planted, '.npmrc'), 'dry-run=true\n');
    const out = join(work, 'out');
    await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'scripts', 'pack.ts'), out], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: planted, TMP: planted, TEMP: planted },
      maxBuffer: 16 * 1024 * 1024,
    });
    expect((await readdir(out)).filter((name) => name.endsWith('.tgz'))).toHaveLength(8);
  }, 120_000);
});
