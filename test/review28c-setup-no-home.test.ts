// The setup command where no home folder can be found (HOME unset and the user without a passwd
// entry, as in a container under an arbitrary uid). Every host keeps its MCP servers under the
// home folder, so setup cannot go on; it stopped with "engage-mcp-setup: A system error occurred:
// uv_os_homedir returned ENOENT (no such file or directory)", which says nothing of what to do.
// It now says there is no home folder and to set HOME. Found by review28c.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../scripts/distribution.js';
import { homelessArgs } from './homeless.js';

const CLI = join(ROOT, 'packages', 'setup', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'engage-setup-no-home-'));
chmodSync(dir, 0o777);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function homelessSetup(args: string[], set: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  const command = [...homelessArgs(CLI, dir, ['HOME', 'XDG_CONFIG_HOME', 'CODEX_HOME'], set), ...args];
  return new Promise((done) => {
    execFile('env', command, { cwd: dir, env: { PATH: process.env.PATH, K: 'sk_live_9f2c4e7a1b3d5f8a6c0e' } }, (error, _stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('engage-mcp-setup with no home folder to be found', () => {
  it.each([
    ['HOME unset', {}],
    // os.homedir() gives HOME as it stands: a relative or empty one made the hosts' files relative to the working folder.
    ['HOME relative', { HOME: 'home' }],
    ['HOME empty', { HOME: '' }],
  ])('%s: says in one line that there is no home folder and to set HOME, and writes nothing', async (_case, set: Record<string, string>) => {
    const args = ['--host', 'claude-desktop', '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-env', 'K', '--yes'];
    const { code, stderr } = await homelessSetup(args, set);
    expect(code).not.toBe(0);
    expect(stderr).toContain('no home folder could be found');
    expect(stderr).toContain('set HOME');
    expect(stderr).not.toContain('uv_os_homedir');
    expect(stderr).not.toContain('    at ');
    // Run in `dir`: nothing appears there but the preload a non-root run needs.
    expect(readdirSync(dir, { recursive: true }).filter((name) => name !== 'homeless.cjs')).toEqual([]);
  });
});
