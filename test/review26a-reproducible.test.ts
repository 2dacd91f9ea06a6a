// What we publish, built twice from one commit: `npm run pack` and `npm run bundle` by builders
// with different umasks (022 and 077), at different times, must give the same bytes, and no file in
// them may be readable by its owner only. Before, `mcpb pack` dated every entry with the time it
// ran, and the files the staging writes (package.json, manifest.json, README.md) took the
// builder's umask. After `npm run build`.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';

const run = promisify(execFile);
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'engage-reproducible-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** `npm run <script> <out>` as a builder with this umask would run it; the files it wrote, by name. */
async function build(script: 'pack' | 'bundle', umask: string, out: string): Promise<Map<string, Buffer>> {
  await run('/bin/sh', ['-c', `umask ${umask} && exec "$0" "$1" "$2"`, TSX, join(ROOT, 'scripts', `${script}.ts`), out], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const names = (await readdir(out)).filter((name) => /\.(tgz|mcpb)$/.test(name)).sort();
  return new Map(await Promise.all(names.map(async (name) => [name, await readFile(join(out, name))] as const)));
}

/** Waits into the next 2-second step of a zip's MS-DOS time, so a second pack is dated otherwise if dates leak in. */
async function nextZipSecond(): Promise<void> {
  const step = Math.floor(Date.now() / 2000);
  while (Math.floor(Date.now() / 2000) === step) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Each entry's Unix mode in a zip (the central directory's external attributes). */
function zipModes(zip: Buffer): Record<string, number> {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const modes: Record<string, number> = {};
  let at = zip.readUInt32LE(end + 16);
  for (let index = 0; index < zip.readUInt16LE(end + 10); index++) {
    const nameLength = zip.readUInt16LE(at + 28);
    modes[zip.subarray(at + 46, at + 46 + nameLength).toString('utf8')] = (zip.readUInt32LE(at + 38) >>> 16) & 0o777;
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return modes;
}

/** Each entry's mode in a gzipped tar (ustar headers). */
function tarModes(tgz: Buffer): Record<string, number> {
  const tar = gunzipSync(tgz);
  const modes: Record<string, number> = {};
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    const field = (start: number, length: number) =>
      tar
        .subarray(at + start, at + start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim(), 8);
    modes[field(0, 100)] = Number.parseInt(field(100, 8).trim(), 8) & 0o777;
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return modes;
}

describe.skipIf(process.platform === 'win32')('two builds of one commit', () => {
  it.each([
    ['pack', tarModes],
    ['bundle', zipModes],
  ] as const)(
    'npm run %s: the same bytes under umask 022 and 077, at another time; every file readable by all',
    async (script, modesOf) => {
      const first = await build(script, '022', join(work, `${script}-022`));
      await nextZipSecond();
      const second = await build(script, '077', join(work, `${script}-077`));
      expect([...second.keys()]).toEqual([...first.keys()]);
      expect(first.size).toBe(script === 'pack' ? 8 : 7);
      for (const [name, bytes] of first) {
        expect(second.get(name)?.equals(bytes), `${name} differs between the two builds`).toBe(true);
        const modes = modesOf(bytes);
        expect(Object.keys(modes).length).toBeGreaterThan(3);
        for (const [entry, mode] of Object.entries(modes)) expect([0o644, 0o755], `${name}: ${entry} is ${mode.toString(8)}`).toContain(mode);
      }
    },
    // Two builds take about 10 s alone; on two loaded cores they have taken 90 s and more.
    400_000,
  );
});
