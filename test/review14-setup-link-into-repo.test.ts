// Review 14, the setup command and a linked folder: the key goes only into the host's usual file
// outside every git work tree, and a symlinked config or folder is judged where it points. But
// when the config's own folder did not exist yet, only the path as written was searched for a
// work tree: with ~/.config a link into a dotfiles repository (~/dotfiles/config) and no
// ~/.config/Claude yet, the live key was written to ~/dotfiles/config/Claude/ ... .json, an
// untracked file of that repository, one `git add -A` from being pushed.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { setupWithKey } from './setup-run.js';

const KEY = 'sk_live_9f2c4e7a1b3d5f8a6c0e';

let home: string;
let repository: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review14-link-'));
  // A dotfiles repository, and ~/.config a link to a folder of it.
  repository = join(home, 'dotfiles');
  await mkdir(join(repository, '.git'), { recursive: true });
  await mkdir(join(repository, 'config'));
  await symlink(join(repository, 'config'), join(home, '.config'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const setup = (host: string, env: NodeJS.ProcessEnv = {}) => setupWithKey(home, host, KEY, env);

/** Every file under the repository that holds the key. */
async function keyedFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    if ((await readFile(file, 'utf8')).includes(KEY)) found.push(file);
  }
  return found;
}

describe('a config whose folder does not exist yet, under a link into a git work tree', () => {
  it('Claude Desktop (~/.config/Claude, ~/.config a link into the repository): refused, the key written nowhere', async () => {
    const ran = await setup('claude-desktop');
    expect(ran.code, ran.stdout).toBe(1);
    expect(ran.stderr).toContain('git work tree');
    expect(await keyedFiles(repository)).toEqual([]);
    expect(existsSync(join(repository, 'config', 'Claude', 'claude_desktop_config.json'))).toBe(false);
  });

  it('Codex (CODEX_HOME=~/.config/codex): the key is passed on by name, never written', async () => {
    const ran = await setup('codex', { CODEX_HOME: join(home, '.config', 'codex') });
    expect(ran.code, ran.stderr).toBe(0);
    expect(await keyedFiles(repository)).toEqual([]);
    const written = parseToml(await readFile(join(repository, 'config', 'codex', 'config.toml'), 'utf8')) as any;
    expect(written.mcp_servers['engage-contact'].env_vars).toEqual(['ENGAGE_API_KEY']);
  });
});
