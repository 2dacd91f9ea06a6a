// Review 39, a backup in a git work tree: setup run on a project's .mcp.json (--config-path) that
// held the key by hand puts ${ENGAGE_API_KEY} in its place, and keeps the file as it was beside it,
// .mcp.json.backup-<time>: a new file in the repository, with the key in it, which `git add -A`
// takes in. Setup said only "the previous file is kept as …". Now it says the backup is inside the
// work tree and holds the file as it was, key too, and to delete it once the new file works.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-review39-backup-repo-');
const HAND_KEY = 'eng_live_39feedfacefeedfacefeedfacefeedfacefeed';

const writeProjectFile = (path: string) =>
  setupWith(home.dir, ['--host', 'claude-code', '--servers', 'contact', '--base-url', 'https://api.example.com', '--yes', '--config-path', path], '');

describe("a backup of a project's file", () => {
  it('inside a git work tree: says it holds the file as it was, key too, and to delete it', async () => {
    const project = join(home.dir, 'project');
    await mkdir(join(project, '.git'), { recursive: true });
    const path = join(project, '.mcp.json');
    await writeFile(path, JSON.stringify({ mcpServers: { 'engage-contact': { command: 'npx', env: { ENGAGE_API_KEY: HAND_KEY } } } }));
    const ran = await writeProjectFile(path);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(await readFile(path, 'utf8')).mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe('${ENGAGE_API_KEY}');
    const backups = (await readdir(project)).filter((name) => name.includes('.backup-'));
    expect(await readFile(join(project, backups[0] as string), 'utf8')).toContain(HAND_KEY);
    expect(ran.stdout).toContain(
      `The backup is inside the git work tree ${project}, and holds the file as it was (a key in it too): delete it once the new file works, and keep it out of commits until then.`,
    );
    expect(ran.stdout).not.toContain(HAND_KEY);
  });

  it('outside any: nothing more said', async () => {
    const path = join(home.dir, 'shared.mcp.json');
    await writeFile(path, '{"mcpServers": {}}');
    const ran = await writeProjectFile(path);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('the previous file is kept as');
    expect(ran.stdout).not.toContain('git work tree');
  });
});
