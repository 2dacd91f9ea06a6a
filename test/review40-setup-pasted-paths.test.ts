// Review 40, the --config-path setup suggests for another build of VS Code (2746d7c) was the path in
// JSON's double quotes: pasted into a shell, a $ or a backquote in it (a home or XDG_CONFIG_HOME
// so named) is expanded there, so the command wrote another file, or ran what the backquotes held.
// Now the path is one shell word that the shell reads back as itself (single quotes).
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shellWord } from '../packages/setup/src/shown.js';
import { setupWith } from './setup-run.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "engage-review40 it's $HOME `id` -"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('a path in a command setup suggests', () => {
  it('VSCodium’s mcp.json under a home with $, a backquote and a quote: pasted, it names that very file', async () => {
    await mkdir(join(home, '.config', 'VSCodium', 'User'), { recursive: true });
    const ran = await setupWith(home, ['--host', 'vscode', '--servers', 'contact', '--base-url', 'https://api.example.com', '--yes'], '');
    expect(ran.code, ran.stderr).toBe(0);
    const word = /VSCodium: run again with --config-path (.*)\)\.$/m.exec(ran.stdout)?.[1];
    expect(word).toBeDefined();
    const pasted = spawnSync('/bin/sh', ['-c', `printf %s ${word}`], { encoding: 'utf8', env: { HOME: '/elsewhere' } });
    expect(pasted.stdout).toBe(join(home, '.config', 'VSCodium', 'User', 'mcp.json'));
  });

  it('on Windows: in plain double quotes, and none where cmd or PowerShell would read a character there', () => {
    expect(shellWord('C:\\Users\\me\\AppData\\Roaming\\Code - Insiders\\User\\mcp.json', 'win32')).toBe(
      '"C:\\Users\\me\\AppData\\Roaming\\Code - Insiders\\User\\mcp.json"',
    );
    for (const path of ['C:\\Users\\100%USERNAME%\\mcp.json', 'C:\\Users\\a$b\\mcp.json', 'C:\\Users\\a`b\\mcp.json', 'C:\\Users\\a"b\\mcp.json'])
      expect(shellWord(path, 'win32')).toBeUndefined();
  });
});
