// `--print --config-path FILE` for a project's shared file (the README sends VS Code users to
// `--print` for `.vscode/mcp.json`): the snippet was the per-user one, with `--prefix <your home>`,
// which on a colleague's machine names a folder that is not there (npx then stops: ENOENT), and,
// for Cursor, Gemini CLI, Claude Code and Codex, a place for the key itself in a file that may be
// checked in. Now the snippet is what writing FILE would put there, the key never in it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { setupWith } from './setup-run.js';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-print-shared-'));
});
afterAll(async () => {
  if (home) await rm(home, { recursive: true, force: true });
});

const print = (host: string, configPath?: string) =>
  setupWith(
    home,
    ['--print', '--host', host, '--servers', 'contact', '--base-url', 'https://api.example.com', ...(configPath ? ['--config-path', configPath] : [])],
    '',
  );

describe("--print with a project's file", () => {
  it.each([
    ['vscode', '.vscode/mcp.json', 'servers', '${input:engage-api-key}'],
    ['cursor', '.cursor/mcp.json', 'mcpServers', '${env:ENGAGE_API_KEY}'],
    ['gemini', '.gemini/settings.json', 'mcpServers', '${ENGAGE_API_KEY}'],
    ['claude-code', '.mcp.json', 'mcpServers', '${ENGAGE_API_KEY}'],
  ])('%s %s: no one home folder, and the key named, not asked for', async (host, file, container, reference) => {
    const ran = await print(host, join(home, 'project', file));
    expect(ran.code, ran.stderr).toBe(0);
    const entry = JSON.parse(ran.stdout)[container]['engage-contact'];
    expect(entry.args).toEqual(['-y', '@engage-mcp/contact']);
    expect(entry.env.ENGAGE_API_KEY).toBe(reference);
  });

  it('codex .codex/config.toml: no home folder, the key passed on by name', async () => {
    const ran = await print('codex', join(home, 'project', '.codex', 'config.toml'));
    expect(ran.code, ran.stderr).toBe(0);
    const entry = (parseToml(ran.stdout) as any).mcp_servers['engage-contact'];
    expect(entry.args).toEqual(['-y', '@engage-mcp/contact']);
    expect(entry.env_vars).toEqual(['ENGAGE_API_KEY']);
    expect(entry.env?.ENGAGE_API_KEY).toBeUndefined();
  });

  it('without --config-path, the per-user snippet as before: --prefix <home> and the key to fill in', async () => {
    const ran = await print('cursor');
    const entry = JSON.parse(ran.stdout).mcpServers['engage-contact'];
    expect(entry.args).toEqual(['--prefix', home, '-y', '@engage-mcp/contact']);
    expect(entry.env.ENGAGE_API_KEY).toBe('<your tenant API key>');
  });
});
