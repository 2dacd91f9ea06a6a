// Review 31, paths in setup's messages: "Wrote <file>" names the file where a symlinked config
// leads, and a repository's .mcp.json may be a link to a name of the repository's choosing. A name
// holding ESC reached the terminal as a command, and one holding a line break printed a line of its
// own. That path is now shown quoted, escaped, where it holds such a character (a plain one stays
// as it is), and no message setup prints passes ESC or another control but its own line breaks.
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWith } from './setup-run.js';

const home = homePerTest('engage-review31-path-');

/** Any character a terminal takes for a command or does not show as itself, the line feed aside. */
const UNSHOWN = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

describe('a project config that links to a hostile name', () => {
  it('Wrote names it escaped, on one line, nothing sent to the terminal', async () => {
    const repo = join(home.dir, 'repo');
    await mkdir(repo);
    const target = 'x\u001b]0;PWNED\u0007\nDone: nothing to worry about';
    await writeFile(join(repo, target), '{\n  "mcpServers": {}\n}\n');
    await symlink(target, join(repo, '.mcp.json'));
    const args = ['--host', 'claude-code', '--servers', 'contact', '--base-url', 'https://api.example.com', '--config-path', join(repo, '.mcp.json'), '--yes'];
    const ran = await setupWith(home.dir, args, '');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toMatch(UNSHOWN);
    expect(ran.stdout.split('\n').filter((line) => line.startsWith('Done'))).toEqual([]);
    expect(ran.stdout).toContain(`Wrote ${JSON.stringify(join(repo, target))} (the previous file`);
    expect(JSON.parse(await readFile(join(repo, target), 'utf8')).mcpServers['engage-contact'].command).toBe('npx');
  });
});
