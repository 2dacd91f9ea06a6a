// The `claude mcp add` commands the README prints, run with the real Claude Code CLI
// (@anthropic-ai/claude-code, a devDependency): each must add the server it promises. The CLI runs
// with HOME set to a temporary folder, so it writes only there (~/.claude.json); `mcp add` needs
// no login and no network, and its optional traffic (telemetry, updates) is turned off.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const KEY = 'eng_live_test_key_for_the_cli';
const BASE_URL = 'https://api.example.com';

/** The CLI's own launcher, which finds the native binary of this platform (not the postinstall's copy, which may not have run). */
function cliPath(): string | undefined {
  try {
    const wrapper = join(dirname(createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/package.json')), 'cli-wrapper.cjs');
    return existsSync(wrapper) ? wrapper : undefined;
  } catch {
    return undefined;
  }
}
const CLI = cliPath();

/** Every `claude mcp add …` the README shows in inline code, with its placeholders filled in. */
function readmeCommands(): string[] {
  return [...README.matchAll(/`(claude mcp add [^`]+)`/g)].map(([, command]) =>
    (command as string)
      .replaceAll('ENGAGE_BASE_URL=https://…', `ENGAGE_BASE_URL=${BASE_URL}`)
      .replaceAll('ENGAGE_API_KEY=…', `ENGAGE_API_KEY=${KEY}`)
      .replaceAll('$ENGAGE_API_KEY', KEY),
  );
}

/** A command line split as a POSIX shell would split these (words, and "double-quoted" words). */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|(\S+)/g)].map(([, quoted, bare]) => quoted ?? (bare as string));
}

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function claude(args: string[]): Promise<{ code: number; output: string; config: Record<string, unknown>; project: string }> {
  const home = mkdtempSync(join(tmpdir(), 'engage-claude-home-'));
  const project = mkdtempSync(join(tmpdir(), 'engage-claude-project-'));
  folders.push(home, project);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    USERPROFILE: home,
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  let code = 0;
  let output = '';
  try {
    const done = await run(process.execPath, [CLI as string, ...args], { cwd: project, env, timeout: 60_000 });
    output = done.stdout + done.stderr;
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    code = typeof failed.code === 'number' ? failed.code : 1;
    output = `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
  }
  const file = join(home, '.claude.json');
  const config = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  return { code, output, config, project };
}

describe.skipIf(CLI === undefined)('the README’s Claude Code commands, run with the real claude CLI', () => {
  it('the README shows the stdio and the remote command', () => {
    const commands = readmeCommands();
    expect(commands.some((command) => command.includes('-- npx -y @engage-mcp/contact'))).toBe(true);
    expect(commands.some((command) => command.includes('--transport http'))).toBe(true);
  });

  it('the stdio command adds engage-contact to the user scope, with both variables', async () => {
    const command = readmeCommands().find((line) => line.includes('-- npx'));
    const { code, output, config } = await claude(words(command as string).slice(1));
    expect({ code, output }).toMatchObject({ code: 0 });
    expect((config.mcpServers as Record<string, unknown>)['engage-contact']).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@engage-mcp/contact'],
      env: { ENGAGE_BASE_URL: BASE_URL, ENGAGE_API_KEY: KEY },
    });
  });

  it('the remote command adds the URL with the key in a header', async () => {
    const command = readmeCommands().find((line) => line.includes('--transport http'));
    const { code, output, config, project } = await claude(words(command as string).slice(1));
    expect({ code, output }).toMatchObject({ code: 0 });
    const projects = config.projects as Record<string, { mcpServers?: Record<string, unknown> }>;
    const entry = Object.entries(projects).find(([path]) => path.endsWith(project.split('/').pop() as string))?.[1];
    expect(entry?.mcpServers?.engage).toEqual({ type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: `Bearer ${KEY}` } });
  });

  it('the name after the --env options is taken as one more variable (why the README puts the name first)', async () => {
    const args = ['mcp', 'add', '--scope', 'user', '--env', `ENGAGE_API_KEY=${KEY}`, 'engage-contact', '--', 'npx', '-y', '@engage-mcp/contact'];
    const { code, output, config } = await claude(args);
    expect(code).not.toBe(0);
    expect(output).toMatch(/Invalid environment variable format: engage-contact/);
    expect(config.mcpServers).toBeUndefined();
  });
});
