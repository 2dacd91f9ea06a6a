// The code cache runs whatever V8 finds in it (V8 checks a cache against its script's length only).
// cacheDirOf() judges the cache folder and every folder above it once, by stat(), which follows
// links: a link in a sticky shared folder (/tmp), owned by another user and pointing at a folder of
// ours, passes. Its owner may re-point it at any time; re-pointed after the check, the launcher read
// the other user's planted cache and ran its code (the bundle's text, size, time and build id all
// the same, as for any npm install). Here the re-pointing is done between the check and the start
// (what a user flipping the link in a loop wins now and then).
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { launcherScript, printWhenWritten } from './launcher-helpers.js';

const OTHER_USER = 65534;
const asRoot = process.getuid?.() === 0;

let harness: string;
beforeAll(() => {
  harness = launcherScript(
    [
      "const { renameSync, statSync, symlinkSync } = require('node:fs');",
      "const { join } = require('node:path');",
      "const { cacheDirOf, cacheFileOf, launch } = require('./scripts/launcher.ts');",
      'const [file, cacheDir, link, target, victim] = process.argv.slice(2);',
      // 'check': the folder the launcher would use; else the given folder, the link re-pointed after the check.
      'const dir = cacheDir === "check" ? cacheDirOf() : cacheDir;',
      'if (link && dir) { symlinkSync(target, `${link}.new`); renameSync(`${link}.new`, link); }',
      // `victim`: the other user also guessed our pid, and links our temporary cache file's name to a file of ours.
      'if (victim && dir) { const cache = cacheFileOf({ name: "contact", buildId: "build1", cacheDir: join(target, "engage-mcp", "code-cache") }, statSync(file)); symlinkSync(victim, `${cache}.${process.pid}.tmp`); }',
      "const launched = launch({ file, name: 'contact', buildId: 'build1', cacheDir: dir, writeAfterMs: 0 });",
      ...printWhenWritten('{ dir: dir ?? null, cache: launched.cache, ran: globalThis.__review7Ran }'),
    ],
    'engage-review7-harness-',
  );
});

function bundleText(who: string): string {
  const body = Array.from({ length: 200 }, (_, index) => `function f${index}(x) { return x * ${index} + 1; }`).join('\n');
  return `${body}\nglobalThis.__review7Ran = ${JSON.stringify(who)};\n`;
}

/** A bundle file with `who`'s text, of one size and time whoever it is. */
function bundleFile(who: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'engage-review7-bundle-')), 'server.cjs');
  writeFileSync(file, bundleText(who));
  utimesSync(file, 1_700_000_000, 1_700_000_000);
  return file;
}

/** One start in its own process; one still running after 20 s is killed (and this throws). */
function run(args: string[], env: Record<string, string> = {}): { dir: string | null; cache: string; ran: string } {
  return JSON.parse(execFileSync(process.execPath, [harness, ...args], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '', ...env } }));
}

/** A sticky shared folder (as /tmp) holding a link, another user's, that points at first to a folder of ours. */
function sharedLink(): { link: string; ours: string } {
  const shared = mkdtempSync(join(tmpdir(), 'engage-review7-shared-'));
  chmodSync(shared, 0o1777);
  const ours = mkdtempSync(join(tmpdir(), 'engage-review7-ours-'));
  const link = join(shared, 'cache');
  symlinkSync(ours, link);
  if (asRoot) lchownSync(link, OTHER_USER, OTHER_USER);
  return { link, ours };
}

describe.skipIf(process.platform === 'win32')('the code cache behind a link another user owns', () => {
  it('runs our bundle, not the cache the link was re-pointed to after the check', () => {
    // The other user's folder, holding a cache made for their same-length bundle, at our cache's name.
    const theirs = mkdtempSync(join(tmpdir(), 'engage-review7-theirs-'));
    const planted = join(theirs, 'engage-mcp', 'code-cache');
    mkdirSync(planted, { recursive: true, mode: 0o700 });
    expect(run([bundleFile('evil'), planted]).cache).toBe('none');
    const [name] = readdirSync(planted);
    if (asRoot) for (const path of [theirs, join(theirs, 'engage-mcp'), planted, join(planted, name as string)]) chownSync(path, OTHER_USER, OTHER_USER);
    else chmodSync(join(planted, name as string), 0o666);

    const { link, ours } = sharedLink();
    const started = run([bundleFile('ours'), 'check', link, theirs], { XDG_CACHE_HOME: link, HOME: ours });
    expect(started.ran).toBe('ours');
  });

  it('starts when the link was re-pointed to a folder with a FIFO at the cache name', () => {
    const theirs = mkdtempSync(join(tmpdir(), 'engage-review7-theirs-'));
    const planted = join(theirs, 'engage-mcp', 'code-cache');
    mkdirSync(planted, { recursive: true, mode: 0o700 });
    const file = bundleFile('ours');
    // The name our start will look for: the one a start with the cache in that folder writes.
    expect(run([file, planted]).cache).toBe('none');
    const [name] = readdirSync(planted);
    execFileSync('rm', [join(planted, name as string)]);
    execFileSync('mkfifo', [join(planted, name as string)]);
    const { link, ours } = sharedLink();
    expect(run([file, 'check', link, theirs], { XDG_CACHE_HOME: link, HOME: ours }).ran).toBe('ours');
  });

  it('does not write through a link planted at its temporary name', () => {
    const theirs = mkdtempSync(join(tmpdir(), 'engage-review7-theirs-'));
    mkdirSync(join(theirs, 'engage-mcp', 'code-cache'), { recursive: true, mode: 0o700 });
    const victim = join(mkdtempSync(join(tmpdir(), 'engage-review7-victim-')), 'notes.txt');
    writeFileSync(victim, 'a file of ours\n');
    const { link, ours } = sharedLink();
    expect(run([bundleFile('ours'), 'check', link, theirs, victim], { XDG_CACHE_HOME: link, HOME: ours }).ran).toBe('ours');
    expect(readFileSync(victim, 'utf8')).toBe('a file of ours\n');
  });
});
