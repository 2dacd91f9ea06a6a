// The servers' bin (scripts/launcher.ts): the bundle runs through V8's code cache. The cache is
// written after the first start and used by the next; one made for other code, a damaged one or
// one in a folder others may write to is never used, and no cache problem stops the bundle.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverEntry, startSandbox } from '../packages/sandbox/src/index.js';
import { cacheDirOf } from '../scripts/launcher.js';
import { bundle, launcherScript, printWhenWritten } from './launcher-helpers.js';

let harness: string;
beforeAll(() => {
  harness = launcherScript([
    "const { launch } = require('./scripts/launcher.ts');",
    'const [file, buildId, cacheDir] = process.argv.slice(2);',
    "const launched = launch({ file, name: 'contact', buildId, cacheDir: cacheDir || undefined, writeAfterMs: 0 });",
    ...printWhenWritten('{ cache: launched.cache, written, runs: globalThis.__engageLauncherRuns, lazy: globalThis.__engageLazy }'),
  ]);
});

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

/** Where the launcher holds TurboFan while a server starts: up to V8 12 (Node 22; scripts/launcher.ts). */
const HOLDS = Number.parseInt(process.versions.v8, 10) < 13;

describe('the optimizing compiler while the bundle starts', () => {
  // A bundle with a loop hot enough for V8 to optimize, run while it starts and again 300 ms later;
  // the launcher's timer lets the optimizer go `writeAfterMs` after the start, or the bundle's end
  // of its start (its first tool call) does. V8 traces what it optimizes.
  let tiering: { harness: string; file: string };
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'engage-launcher-'));
    const loop = (name: string) => `function ${name}(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }`;
    const file = join(dir, 'server.cjs');
    writeFileSync(file, `${loop('hotWhileStarting')}\n${loop('hotAfterStart')}\nhotWhileStarting(3e6);\nglobalThis.hotAfterStart = hotAfterStart;\n`);
    const harness = launcherScript([
      "const { launch } = require('./scripts/launcher.ts');",
      "const { endOfStart } = require('./shared/src/mcp/end-of-start.ts');",
      'const [file, writeAfterMs, ending] = process.argv.slice(2);',
      "launch({ file, name: 'contact', buildId: 'build1', cacheDir: undefined, writeAfterMs: Number(writeAfterMs) });",
      "setTimeout(() => { if (ending === 'end') endOfStart(); globalThis.hotAfterStart(3e6); console.log('done'); }, 300);",
    ]);
    tiering = { harness, file };
  });
  /** The loops V8 optimized. */
  const optimized = (options: { writeAfterMs: number; bundleEndsStart: boolean; nodeOptions?: string[] }) => {
    const args = [
      ...(options.nodeOptions ?? []),
      '--trace-opt',
      tiering.harness,
      tiering.file,
      String(options.writeAfterMs),
      options.bundleEndsStart ? 'end' : '',
    ];
    const trace = execFileSync(process.execPath, args, { encoding: 'utf8' });
    // It ran to its end (a concurrent compile may still trace after the line).
    expect(trace).toMatch(/^done$/m);
    // TurboFan's (later Nodes' Maglev, not held, also traces here).
    return ['hotWhileStarting', 'hotAfterStart'].filter((name) => new RegExp(`compiling method [^\n]*${name}[^\n]*target TURBOFAN`).test(trace));
  };

  it.runIf(HOLDS)('is held back while the bundle starts, until the bundle ends its start or the timer runs out', () => {
    expect(optimized({ writeAfterMs: 60_000, bundleEndsStart: false })).toEqual([]);
    expect(optimized({ writeAfterMs: 60_000, bundleEndsStart: true })).toEqual(['hotAfterStart']);
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: false })).toEqual(['hotAfterStart']);
  });

  it.skipIf(HOLDS)('is not held from V8 13 (Node 24), where TurboFan optimizes nothing while a server starts', () => {
    expect(optimized({ writeAfterMs: 60_000, bundleEndsStart: false })).toEqual(['hotWhileStarting', 'hotAfterStart']);
  });

  it('is left as the user set it: their --turbofan optimizes the start too, their --no-turbofan is kept', () => {
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: false, nodeOptions: ['--turbofan'] })).toEqual(['hotWhileStarting', 'hotAfterStart']);
    // With frozen flags V8 aborts on any change: nothing is held, and the bundle runs.
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: false, nodeOptions: ['--freeze-flags-after-init'] })).toEqual(['hotWhileStarting', 'hotAfterStart']);
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: true, nodeOptions: ['--no-turbofan'] })).toEqual([]);
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: true, nodeOptions: ['--noturbofan'] })).toEqual([]);
    // V8's one-dash spelling; and V8's contradiction check made fatal, which the hold would trip.
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: true, nodeOptions: ['-no-turbofan'] })).toEqual([]);
    expect(optimized({ writeAfterMs: 50, bundleEndsStart: false, nodeOptions: ['--abort-on-contradictory-flags'] })).toEqual([
      'hotWhileStarting',
      'hotAfterStart',
    ]);
  });
});

describe('a built server', () => {
  it.runIf(HOLDS)('ends its start on its first tool call: the optimizer is let go before the call loads the catalog', async () => {
    const sandbox = await startSandbox();
    const dir = mkdtempSync(join(tmpdir(), 'engage-launcher-'));
    const events = join(dir, 'events');
    const preload = join(dir, 'note.cjs');
    // Notes V8's flags as the launcher sets them and each module compiled; the launcher's own
    // timer (a second) is stretched so that, however slow the machine, only the call ends the start.
    writeFileSync(
      preload,
      `const { appendFileSync } = require('node:fs');
const { basename } = require('node:path');
const v8 = require('node:v8');
const Module = require('node:module');
const note = (what) => appendFileSync(process.env.ENGAGE_TEST_EVENTS, what + '\\n');
const setFlags = v8.setFlagsFromString;
v8.setFlagsFromString = (flags) => { note(flags); return setFlags(flags); };
const later = global.setTimeout;
global.setTimeout = (work, ms, ...args) => later(work, ms === 1000 ? 600000 : ms, ...args);
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) { note(basename(filename)); return compile.apply(this, arguments); };
`,
    );
    writeFileSync(events, '');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--require', preload, serverEntry('contact')],
      env: {
        PATH: process.env.PATH ?? '',
        ENGAGE_BASE_URL: sandbox.baseUrl,
        ENGAGE_API_KEY: sandbox.keys.full,
        ENGAGE_TEST_EVENTS: events,
        XDG_CACHE_HOME: dir,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'launcher-test', version: '0' });
    const noted = () => readFileSync(events, 'utf8').trim().split('\n');
    try {
      await client.connect(transport);
      await client.listTools();
      expect(noted().filter((event) => event.includes('turbofan'))).toEqual(['--no-turbofan']);
      const read = await client.callTool({ name: 'contact_read', arguments: { operationId: 'contact.list', limit: 2 } });
      expect(read.isError).toBeFalsy();
      const after = noted();
      expect(after.filter((event) => event.includes('turbofan'))).toEqual(['--no-turbofan', '--turbofan']);
      expect(after.indexOf('--turbofan')).toBeLessThan(after.indexOf('operations.cjs'));
    } finally {
      await client.close();
      sandbox.close();
    }
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
