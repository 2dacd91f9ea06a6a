// Review 39, a config that is a link to a read-only file another tool keeps (home-manager links
// ~/.cursor/mcp.json into /nix/store; dotfiles managers do the like): setup said it "is read-only …
// Make it writable (chmod u+w)", which cannot be done in the Nix store and would be undone by the
// tool's next run anyway. Now it names where the link leads and says to add the servers where that
// tool takes its settings.
import { chmod, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configPathIn, homePerTest, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-managed-');
const KEY = 'eng_live_39bead5bead5bead5bead5bead5bead5bead';
const MANAGED = '{"mcpServers": {}}\n';

describe('a config linked to a read-only file', () => {
  it('names where the link leads and where to add the servers; nothing changed', async () => {
    const store = join(home.dir, 'nix', 'store', 'abc123-mcp.json');
    await mkdir(dirname(store), { recursive: true });
    await writeFile(store, MANAGED);
    await chmod(store, 0o444);
    const path = configPathIn(home.dir, 'cursor');
    await mkdir(dirname(path));
    await symlink(store, path);
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is a link to ${store}, which is read-only: the tool that made the link keeps that file`);
    expect(ran.stderr).toContain('Add the servers where that tool takes its settings (--print shows them).');
    expect(ran.stderr).not.toContain('chmod');
    expect(await readFile(store, 'utf8')).toBe(MANAGED);
  });
});
