// Claude Code's own CLI (@anthropic-ai/claude-code, a devDependency) against the remote service with
// OAuth on, over loopback against the sandbox: the URL added with no header; `mcp list` and `mcp get`
// say it needs authentication; `mcp login --no-browser` goes through discovery and prints our consent
// URL, and is then answered "denied" on its own redirect URI, as our consent page's Deny would.
// Offline as in host-commands.test.ts: HOME in a temporary folder, telemetry and updates off. The
// login insists on a terminal, so it runs under util-linux's `script` (a pseudo-terminal). The
// consent page itself is not opened: Claude Code names itself by a Client ID Metadata Document at
// claude.ai, which the service would fetch, and these tests reach only loopback.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { redirectUriProblem } from '../packages/http/src/oauth/clients.js';
import { MemoryOAuthStore } from '../packages/http/src/oauth/index.js';
import { startService, type Service } from '../packages/http/src/service.js';

const run = promisify(execFile);
/** The client_id Claude Code sends when the authorization server supports metadata documents (no registration). */
const CLAUDE_CODE_CLIENT = 'https://claude.ai/oauth/claude-code-client-metadata';

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
const SCRIPT = (process.env.PATH ?? '').split(delimiter).find((folder) => existsSync(join(folder, 'script'))) !== undefined;

let sandbox: Sandbox;
let service: Service;
let home: string;
let project: string;
/** Logins still running when a test ends early (a failed expectation) are stopped in afterAll. */
const logins: Array<{ kill(): boolean; exitCode: number | null }> = [];

function cliEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    USERPROFILE: home,
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** One `claude …` command in the shared HOME and project: its exit code and everything it printed. */
async function claude(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const done = await run(process.execPath, [CLI as string, ...args], { cwd: project, env: cliEnv(), timeout: 60_000 });
    return { code: 0, output: done.stdout + done.stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** What a terminal shows, without its colours, cursor moves and carriage returns. */
function plain(output: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences are what is removed
  return output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
}

const shellWord = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

interface Login {
  /** The authorization URL the CLI printed, once it waits for the redirect. */
  authorizationUrl: Promise<URL>;
  /** The CLI's exit code and output once it has ended. */
  ended: Promise<{ code: number | null; output: string }>;
}

/** `claude mcp login <name> --no-browser` in a pseudo-terminal, watched until it prints the URL it wants opened. */
function startLogin(name: string): Login {
  const command = [process.execPath, CLI as string, 'mcp', 'login', name, '--no-browser'].map(shellWord).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: project, env: cliEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  logins.push(child);
  let output = '';
  const ended = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.on('close', (code) => resolve({ code, output: plain(output) }));
  });
  const authorizationUrl = new Promise<URL>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const printed = /Visit this URL to authorize:\s+(\S+)[\s\S]*Waiting for authorization/.exec(plain(output));
      if (printed) resolve(new URL(printed[1] as string));
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void ended.then(({ code }) => reject(new Error(`claude mcp login ended (${code}) before printing a URL:\n${plain(output)}`)));
  });
  void authorizationUrl.catch(() => undefined);
  void ended.then(() => child.stdin.destroy());
  return { authorizationUrl, ended };
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'engage-claude-oauth-home-'));
  project = mkdtempSync(join(tmpdir(), 'engage-claude-oauth-project-'));
  sandbox = await startSandbox();
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => undefined,
    oauth: { kek: randomBytes(32), store: new MemoryOAuthStore() },
  });
});
afterAll(async () => {
  for (const child of logins) if (child.exitCode === null) child.kill();
  await service?.close();
  await sandbox?.close();
  for (const folder of [home, project]) if (folder) rmSync(folder, { recursive: true, force: true });
});

describe.skipIf(CLI === undefined)('Claude Code’s CLI adds the service by URL alone, with OAuth on', () => {
  it('`mcp add` with no header, then `mcp list` and `mcp get` say it needs authentication, not a registration error', async () => {
    const added = await claude(['mcp', 'add', '--transport', 'http', 'engage', `${service.url}/mcp`]);
    expect(added, added.output).toMatchObject({ code: 0 });
    expect(added.output).toContain(`Added HTTP MCP server engage with URL: ${service.url}/mcp`);

    const listed = await claude(['mcp', 'list']);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toContain(`engage: ${service.url}/mcp (HTTP) - ! Needs authentication`);
    const shown = await claude(['mcp', 'get', 'engage']);
    expect(shown.code, shown.output).toBe(0);
    expect(shown.output).toMatch(/Status: ! Needs authentication/);
    for (const { output } of [listed, shown]) expect(output).not.toMatch(/regist|Failed to connect|error/i);
  });

  it.skipIf(!SCRIPT)('`mcp login --no-browser` completes discovery and prints our consent URL: PKCE S256, our resource, no registration', async () => {
    const login = startLogin('engage');
    const url = await login.authorizationUrl;
    expect(url.origin + url.pathname).toBe(`${service.url}/oauth/authorize`);
    const param = (name: string) => url.searchParams.get(name) ?? '';
    expect(param('response_type')).toBe('code');
    expect(param('code_challenge_method')).toBe('S256');
    expect(param('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(param('resource')).toBe(`${service.url}/mcp`);
    // Our metadata says client_id_metadata_document_supported, so the CLI names itself by its document: no registration step.
    expect(param('client_id')).toBe(CLAUDE_CODE_CLIENT);
    expect(redirectUriProblem(param('redirect_uri'))).toBeUndefined();
    const offered = (await (await fetch(`${service.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { scopes_supported: string[] };
    expect(param('scope').split(' ')).toEqual(expect.arrayContaining(['contact.read']));
    expect(offered.scopes_supported).toEqual(expect.arrayContaining(param('scope').split(' ')));

    // End it as our consent page's Deny would: the CLI's own redirect URI, answered access_denied with its state.
    const denial = new URL(param('redirect_uri'));
    denial.searchParams.set('error', 'access_denied');
    denial.searchParams.set('state', param('state'));
    await (await fetch(denial)).arrayBuffer();
    const { code, output } = await login.ended;
    expect(code, output).not.toBe(0);
    expect(output).toContain(`Couldn't complete authentication for "engage": OAuth error: access_denied`);
    expect(output).not.toMatch(/regist|Incompatible auth server/i);
  });
});
