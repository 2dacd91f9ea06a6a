// The servers' bin (scripts/launcher.ts): the bundle runs through V8's code cache. The cache is
// written after the first start and used by the next; one made for other code, a damaged one or
// one in a folder others may write to is never used, and no cache problem stops the bundle.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cacheDirOf } from '../scripts/launcher.js';
import { launcherScript, printWhenWritten } from './launcher-helpers.js';

let harness: string;
beforeAll(() => {
  harness = launcherScript([
    "const { launch } = require('./scripts/launcher.ts');",
    'const [file, buildId, cacheDir] = process.argv.slice(2);',
    "const launched = launch({ file, name: 'contact', buildId, cacheDir: cacheDir || undefined, writeAfterMs: 0 });",
    ...printWhenWritten('{ cache: launched.cache, written, runs: globalThis.__engageLauncherRuns, lazy: globalThis.__engageLazy }'),
  ]);
});

/** A bundle like server.cjs: it notes that it ran and loads a sibling module with require(). */
function bundle(): { dir: string; file: string; cacheDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'engage-launcher-'));
  const file = join(dir, 'server.cjs');
  writeFileSync(join(dir, 'lazy.cjs'), 'module.exports = { answer: 42 };\n');
  const body = Array.from({ length: 200 }, (_, index) => `function f${index}(x) { return x * ${index} + 1; }`).join('\n');
  writeFileSync(
    file,
    `#!/usr/bin/env node\n${body}\nglobalThis.__engageLauncherRuns = (globalThis.__engageLauncherRuns ?? 0) + 1;\nglobalThis.__engageLazy = require('./lazy.cjs').answer + f3(0) - 1;\nmodule.exports = { dirname: __dirname };\n`,
  );
  const cacheDir = join(dir, 'cache');
  mkdirSync(cacheDir, { mode: 0o700 });
  return { dir, file, cacheDir };
}

interface Start {
  cache: 'used' | 'none' | 'rejected' | 'off';
  written: boolean;
  runs: number;
  lazy: number;
}

/** One start in its own process; `cacheDir` '' turns the cache off. */
function start(b: ReturnType<typeof bundle>, buildId = 'build1', cacheDir = b.cacheDir): Start {
  return JSON.parse(execFileSync(process.execPath, [harness, b.file, buildId, cacheDir], { encoding: 'utf8' })) as Start;
}

describe('the launcher', () => {
  it('runs the bundle, writes a cache after the first start, and the next start uses it', () => {
    const b = bundle();
    expect(start(b)).toEqual({ cache: 'none', written: true, runs: 1, lazy: 42 });
    const [file] = readdirSync(b.cacheDir);
    expect(file).toMatch(new RegExp(`^contact_build1_\\d+_\\d+_${process.version}_${process.versions.v8}_${process.platform}_${process.arch}\\.bin$`));
    if (process.platform !== 'win32') expect(statSync(join(b.cacheDir, file as string)).mode & 0o777).toBe(0o600);
    expect(start(b)).toEqual({ cache: 'used', written: false, runs: 1, lazy: 42 });
  });

  it('never uses the cache of another build; a damaged cache is refused, the bundle run, the cache made again', () => {
    const b = bundle();
    start(b);
    expect(start(b, 'build2').cache).toBe('none');
    const damaged = readdirSync(b.cacheDir).find((name) => name.startsWith('contact_build1_')) as string;
    writeFileSync(join(b.cacheDir, damaged), Buffer.alloc(4096, 7));
    expect(start(b)).toEqual({ cache: 'rejected', written: true, runs: 1, lazy: 42 });
    expect(start(b).cache).toBe('used');
  });

  it('a cache for the same build of another bundle text (edited since) is not used', () => {
    const b = bundle();
    start(b);
    writeFileSync(b.file, `${'// edited\n'}globalThis.__engageLauncherRuns = 1; globalThis.__engageLazy = 7;\n`);
    expect(start(b)).toMatchObject({ cache: 'none', lazy: 7 });
  });

  it("removes this bundle's caches (and cut-short writes) unused for a week when it writes one, and keeps the rest", () => {
    const b = bundle();
    const old = join(b.cacheDir, 'contact_oldbuild_1_1_v0_x_y.bin');
    const recent = join(b.cacheDir, 'contact_otherbuild_1_1_v0_x_y.bin');
    const otherServer = join(b.cacheDir, 'billing_oldbuild_1_1_v0_x_y.bin');
    const leftover = join(b.cacheDir, 'contact_oldbuild_1_1_v0_x_y.bin.4242.tmp');
    for (const path of [old, recent, otherServer, leftover]) writeFileSync(path, 'x');
    const weekAgo = new Date(Date.now() - 8 * 24 * 60 * 60 * 1000);
    for (const path of [old, otherServer, leftover]) utimesSync(path, weekAgo, weekAgo);
    expect(start(b).written).toBe(true);
    expect([existsSync(old), existsSync(recent), existsSync(otherServer), existsSync(leftover)]).toEqual([false, true, true, false]);
  });

  it('a cache that cannot be written is left alone, and with the cache off none is read or written: the bundle runs', () => {
    const b = bundle();
    expect(start(b, 'build1', join(b.dir, 'no-such-folder'))).toEqual({ cache: 'none', written: false, runs: 1, lazy: 42 });
    expect(start(b, 'build1', '')).toEqual({ cache: 'off', written: false, runs: 1, lazy: 42 });
    expect(readdirSync(b.cacheDir)).toEqual([]);
  });
});

describe('the cache folder', () => {
  it('is under XDG_CACHE_HOME, made for the user alone; NODE_DISABLE_COMPILE_CACHE turns it off', () => {
    const home = mkdtempSync(join(tmpdir(), 'engage-cache-home-'));
    const dir = cacheDirOf({ XDG_CACHE_HOME: home });
    expect(dir).toBe(join(home, 'engage-mcp', 'code-cache'));
    if (process.platform !== 'win32') expect(statSync(dir as string).mode & 0o077).toBe(0);
    expect(cacheDirOf({ XDG_CACHE_HOME: home, NODE_DISABLE_COMPILE_CACHE: '1' })).toBeUndefined();
  });

  it.skipIf(process.platform === 'win32')('is not used when others may write to it', () => {
    const home = mkdtempSync(join(tmpdir(), 'engage-cache-home-'));
    const dir = join(home, 'engage-mcp', 'code-cache');
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    expect(cacheDirOf({ XDG_CACHE_HOME: home })).toBeUndefined();
  });
});
