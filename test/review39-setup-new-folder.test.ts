// Review 39, the wrong program chosen: a person on VS Code Insiders (or VSCodium) who answers "VS
// Code" had setup make ~/.config/Code/User and write mcp.json there, "Wrote …, restart VS Code",
// and their editor, which reads "Code - Insiders", never showed a server; the same with Cursor
// chosen for another editor, or a host never run as this user. Now, where the host's own folder
// was not there before the run, setup says so, and for VS Code names the file of another build it
// finds beside it, with the --config-path that writes it.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupWith, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review39-folder-');
const KEY = 'eng_live_39ab12cd34ef56ab78cd90ef12ab34cd56ef';

const vscode = () => setupWith(home.dir, ['--host', 'vscode', '--servers', 'contact', '--base-url', 'https://api.example.com', '--yes'], '');

describe("the host's own folder not there before the run", () => {
  it('VS Code, with Insiders beside it: names the Insiders file and the flag that writes it', async () => {
    await mkdir(join(home.dir, '.config', 'Code - Insiders', 'User'), { recursive: true });
    const ran = await vscode();
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`A new folder:\n  There was no ${join(home.dir, '.config', 'Code', 'User')} before this run: VS Code has not been started`);
    expect(ran.stdout).toContain(
      `Another build of VS Code keeps its settings here (Code - Insiders: run again with --config-path '${join(home.dir, '.config', 'Code - Insiders', 'User', 'mcp.json')}').`,
    );
  });

  it('Cursor never run here: says so', async () => {
    const ran = await setupWithKey(home.dir, 'cursor', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`There was no ${join(home.dir, '.cursor')} before this run: Cursor has not been started as this user on this machine`);
  });

  it('Claude Code, ~/.claude.json there but no ~/.claude: the file is where the host looks, nothing said', async () => {
    await writeFile(join(home.dir, '.claude.json'), '{"numStartups": 3}\n');
    const ran = await setupWithKey(home.dir, 'claude-code', KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('A new folder');
  });

  it.each([
    ['cursor', '.cursor'],
    ['claude-code', '.claude'],
  ])('%s, its folder there: nothing said', async (host, folder) => {
    await mkdir(join(home.dir, folder));
    const ran = await setupWithKey(home.dir, host, KEY);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('A new folder');
  });
});
