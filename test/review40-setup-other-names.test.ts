// Review 40, setup writes a new file and renames it over the config. A config with another name, a
// hard link (a dotfiles folder hard-linked into the home, as some tools make, or by hand): the new
// text took the config's name only and the other name kept the old file; a config that was a
// symbolic link to no file (a dotfiles link whose file is gone or not made yet): the new file took
// the link's place. Setup said only "Wrote …": the person's dotfiles silently stopped following
// their config. Now it says so.
import { link, lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review40-hardlink-');
const KEY = 'eng_live_40ha4d1ink0ha4d1ink0ha4d1ink';
const ORIGINAL = '{"mcpServers": {}}\n';

describe('a config with another name (a hard link)', () => {
  it('says the other name keeps the file as it was', async () => {
    const path = configPathIn(home.dir, 'cursor');
    const dotfile = join(home.dir, 'dotfiles', 'cursor-mcp.json');
    await mkdir(dirname(dotfile));
    await writeFile(dotfile, ORIGINAL);
    await mkdir(dirname(path));
    await link(dotfile, path);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toContain('engage-contact');
    expect(await readFile(dotfile, 'utf8')).toBe(ORIGINAL);
    expect(ran.stdout).toContain(
      `${path} had another name (a hard link, as some dotfiles tools make): the new file has this name only, and that one keeps the file as it was.`,
    );
  });

  it('a file of one name: nothing said', async () => {
    const path = configPathIn(home.dir, 'cursor');
    await mkdir(dirname(path));
    await writeFile(path, ORIGINAL);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('hard link');
  });

  it('a symbolic link to no file: says the new file replaced the link', async () => {
    const path = configPathIn(home.dir, 'cursor');
    const dotfile = join(home.dir, 'dotfiles', 'cursor-mcp.json');
    await mkdir(dirname(path));
    await symlink(dotfile, path);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect((await lstat(path)).isFile()).toBe(true);
    expect(ran.stdout).toContain(
      `${path} was a symbolic link to ${dotfile}, where there was no file: the new file replaced the link, and nothing was made there.`,
    );
  });
});
