// review20: the README says the setup command writes VS Code's user mcp.json under
// `$XDG_CONFIG_HOME` "or else `~/.config`" and Codex's config under `$CODEX_HOME` "when that is
// set". A variable set to the empty string (`XDG_CONFIG_HOME=` in a shell profile, a CI job's
// blank) counted as set: the path became relative, and the command wrote `Code/User/mcp.json`
// or `config.toml` into whatever folder it was run from, files neither host reads (VS Code
// takes an empty XDG_CONFIG_HOME as unset, Codex an empty CODEX_HOME). An empty one is unset now.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOSTS } from '../packages/setup/src/hosts.js';
import { ROOT } from '../scripts/distribution.js';

const CLI = join(ROOT, 'packages', 'setup', 'dist', 'cli.js');
const KEY = 'sk_live_9f2c4e7a1b3d5f8a6c0e';

let home: string;
let cwd: string;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-r20-home-'));
  cwd = await mkdtemp(join(tmpdir(), 'engage-r20-cwd-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(cwd, { recursive: true, force: true });
});

function setup(host: string, env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, '--host', host, '--servers', 'contact', '--base-url', 'https://api.example.com', '--key-env', 'K', '--yes'], {
    cwd,
    env: { PATH: process.env.PATH, HOME: home, K: KEY, ...env },
    encoding: 'utf8',
  });
}

describe('an empty XDG_CONFIG_HOME, CODEX_HOME or APPDATA counts as unset', () => {
  it('the paths fall back to the usual folders', () => {
    const linux = { platform: 'linux' as const, home: '/home/u', env: { XDG_CONFIG_HOME: '', CODEX_HOME: '' } };
    expect(HOSTS.vscode.configPath(linux)).toBe('/home/u/.config/Code/User/mcp.json');
    expect(HOSTS['claude-desktop'].configPath(linux)).toBe('/home/u/.config/Claude/claude_desktop_config.json');
    expect(HOSTS.codex.configPath(linux)).toBe('/home/u/.codex/config.toml');
    const windows = { platform: 'win32' as const, home: 'C:\\Users\\u', env: { APPDATA: '' } };
    expect(HOSTS['claude-desktop'].configPath(windows)).toContain(join('C:\\Users\\u', 'AppData', 'Roaming', 'Claude'));
  });

  it('a relative XDG_CONFIG_HOME is ignored, as the XDG spec says: not a folder under wherever setup runs', () => {
    const linux = { platform: 'linux' as const, home: '/home/u', env: { XDG_CONFIG_HOME: 'cfg' } };
    expect(HOSTS.vscode.configPath(linux)).toBe('/home/u/.config/Code/User/mcp.json');
    expect(HOSTS['claude-desktop'].configPath(linux)).toBe('/home/u/.config/Claude/claude_desktop_config.json');
    const absolute = { platform: 'linux' as const, home: '/home/u', env: { XDG_CONFIG_HOME: '/srv/cfg' } };
    expect(HOSTS.vscode.configPath(absolute)).toBe('/srv/cfg/Code/User/mcp.json');
  });

  it('vscode: the bin writes ~/.config/Code/User/mcp.json, nothing in the folder it runs in', async () => {
    const ran = setup('vscode', { XDG_CONFIG_HOME: '' });
    expect(ran.status, ran.stderr).toBe(0);
    expect(existsSync(join(home, '.config', 'Code', 'User', 'mcp.json'))).toBe(true);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('codex: the bin writes ~/.codex/config.toml, nothing in the folder it runs in', async () => {
    const ran = setup('codex', { CODEX_HOME: '' });
    expect(ran.status, ran.stderr).toBe(0);
    expect(existsSync(join(home, '.codex', 'config.toml'))).toBe(true);
    expect(await readdir(cwd)).toEqual([]);
  });
});
