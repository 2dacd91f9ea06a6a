// Review 6, the servers' bin (scripts/launcher.ts): a cache damaged past V8's header check must not
// stop a server from starting (V8 checks only a cache's header and the source's length; it trusts
// the rest and crashes on a damaged payload).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cacheDirOf, cacheFileBytes, cacheFileOf } from '../scripts/launcher.js';
import { launcherScript, printWhenWritten } from './launcher-helpers.js';

let harness: string;
beforeAll(() => {
  harness = launcherScript([
    "const { launch } = require('./scripts/launcher.ts');",
    'const [file, cacheDir] = process.argv.slice(2);',
    "const launched = launch({ file, name: 'contact', buildId: 'build1', cacheDir, writeAfterMs: 0 });",
    ...printWhenWritten('{ cache: launched.cache, written, runs: globalThis.__engageRuns }'),
  ]);
});

function bundle(): { file: string; cacheDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'engage-review6-'));
  const file = join(dir, 'server.cjs');
  const body = Array.from({ length: 200 }, (_, index) => `function f${index}(x) { return x * ${index} + 1; }`).join('\n');
  writeFileSync(file, `${body}\nglobalThis.__engageRuns = (globalThis.__engageRuns ?? 0) + f1(0);\n`);
  const cacheDir = join(dir, 'cache');
  mkdirSync(cacheDir, { mode: 0o700 });
  return { file, cacheDir };
}

function start(b: { file: string; cacheDir: string }): { status: number | null; signal: string | null; out: unknown } {
  const run = spawnSync(process.execPath, [harness, b.file, b.cacheDir], { encoding: 'utf8' });
  return { status: run.status, signal: run.signal, out: run.status === 0 ? JSON.parse(run.stdout) : run.stderr.slice(0, 200) };
}

describe('a damaged code cache', () => {
  it('whose payload was zeroed (what a crash while writing may leave) is not used: the bundle runs and the cache is made again', () => {
    const b = bundle();
    expect(start(b).out).toMatchObject({ cache: 'none', written: true, runs: 1 });
    const name = readdirSync(b.cacheDir)[0] as string;
    const cache = readFileSync(join(b.cacheDir, name));
    cache.fill(0, Math.floor(cache.length / 2));
    writeFileSync(join(b.cacheDir, name), cache);
    expect(start(b)).toEqual({ status: 0, signal: null, out: { cache: 'rejected', written: true, runs: 1 } });
    expect(start(b).out).toMatchObject({ cache: 'used', runs: 1 });
  });

  it('whose payload has flipped bits is not used either', () => {
    const b = bundle();
    start(b);
    const name = readdirSync(b.cacheDir)[0] as string;
    const cache = readFileSync(join(b.cacheDir, name));
    for (let at = Math.floor(cache.length / 2); at < cache.length; at++) cache[at] = (cache[at] as number) ^ 0x5a;
    writeFileSync(join(b.cacheDir, name), cache);
    expect(start(b)).toEqual({ status: 0, signal: null, out: { cache: 'rejected', written: true, runs: 1 } });
  });
});

/** A cache file as the launcher writes it (its SHA-256, then V8's data), made from `source` by another process. */
function plantedCache(source: string): Buffer {
  const script = [
    "const { Script } = require('node:vm');",
    "const { Module } = require('node:module');",
    `const script = new Script(Module.wrap(${JSON.stringify(source)}), { filename: '/planted.cjs' });`,
    'script.runInThisContext();',
    "process.stdout.write(script.createCachedData().toString('base64'));",
  ].join('\n');
  return cacheFileBytes(Buffer.from(spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' }).stdout, 'base64'));
}

describe('the cache folder named by a relative XDG_CACHE_HOME', () => {
  it('is not used: it would be a folder of the working directory, where a cloned project could plant code for the server', () => {
    // A host starts servers in the project's folder; the project ships .cache/engage-mcp/code-cache/.
    const project = mkdtempSync(join(tmpdir(), 'engage-review6-project-'));
    const home = mkdtempSync(join(tmpdir(), 'engage-review6-home-'));
    const file = join(project, 'server.cjs');
    writeFileSync(file, "globalThis.__engageWho = 'real';");
    const { size, mtimeMs } = statSync(file);
    const planted = join(project, '.cache', 'engage-mcp', 'code-cache');
    mkdirSync(planted, { recursive: true, mode: 0o700 });
    // The name the launcher would look for (its own function), so the test breaks if the name changes.
    const cache = cacheFileOf({ name: 'contact', buildId: 'build1', cacheDir: planted }, { size, mtimeMs });
    // Same length, other code: V8 checks a cache against the source's length only.
    writeFileSync(cache, plantedCache("globalThis.__engageWho = 'evil';"));
    const bin = launcherScript(
      [
        "const { cacheDirOf, launch } = require('./scripts/launcher.ts');",
        `launch({ file: ${JSON.stringify(file)}, name: 'contact', buildId: 'build1', cacheDir: cacheDirOf(), writeAfterMs: 60000 });`,
        'console.log(globalThis.__engageWho);',
      ],
      'engage-review6-bin-',
    );
    const run = spawnSync(process.execPath, [bin], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CACHE_HOME: '.cache' },
    });
    expect(run.stdout.trim()).toBe('real');
    // The control: named absolutely, the same folder is used, and the planted cache's code runs
    // (so the case above shows the relative name refused, not a cache that missed its name).
    const control = spawnSync(process.execPath, [bin], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CACHE_HOME: join(project, '.cache') },
    });
    expect(control.stdout.trim()).toBe('evil');
  });
});

describe.skipIf(process.platform === 'win32')('the cache folder below a folder others may write to', () => {
  it('is not used: another user could rename the folders in it and put theirs (and their cache) in place', () => {
    const shared = mkdtempSync(join(tmpdir(), 'engage-review6-shared-'));
    chmodSync(shared, 0o777);
    expect(cacheDirOf({ XDG_CACHE_HOME: join(shared, 'cache') })).toBeUndefined();
    // Nor when the folder named is a link into such a folder.
    const home = mkdtempSync(join(tmpdir(), 'engage-review6-home-'));
    mkdirSync(join(shared, 'elsewhere'), { mode: 0o700 });
    symlinkSync(join(shared, 'elsewhere'), join(home, 'cache'));
    expect(cacheDirOf({ XDG_CACHE_HOME: join(home, 'cache') })).toBeUndefined();
  });

  it('is used below a folder others may write to with the sticky bit (/tmp), where nobody may rename what is not theirs', () => {
    const sticky = mkdtempSync(join(tmpdir(), 'engage-review6-sticky-'));
    chmodSync(sticky, 0o1777);
    expect(cacheDirOf({ XDG_CACHE_HOME: join(sticky, 'cache') })).toBe(join(sticky, 'cache', 'engage-mcp', 'code-cache'));
  });
});
