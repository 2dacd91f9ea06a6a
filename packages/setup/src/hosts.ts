// The hosts the setup command knows: where each keeps its MCP servers and in what shape. Each is
// as that host's own documentation describes it (the README's Install section names the pages).
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';

export type HostId = 'claude-desktop' | 'claude-code' | 'vscode' | 'cursor' | 'codex' | 'gemini';

export interface Environment {
  platform: NodeJS.Platform;
  home: string;
  env: NodeJS.ProcessEnv;
}

export function currentEnvironment(): Environment {
  return { platform: process.platform, home: homeFolder(), env: process.env };
}

/**
 * The user's home folder, where every host keeps its MCP servers. os.homedir() gives HOME as it
 * stands (a relative or empty one would put the hosts' files under the working folder), so then the
 * passwd entry's; it throws where there is none (HOME unset, no passwd entry).
 */
function homeFolder(): string {
  try {
    const home = homedir();
    if (isAbsolute(home)) return home;
    const own = userInfo().homedir;
    if (isAbsolute(own)) return own;
  } catch {
    // No home to be found: said below.
  }
  throw new Error(
    'no home folder could be found (HOME is unset or not an absolute path, and this user has no passwd entry with an absolute home), and the hosts keep their MCP servers under it: set HOME to your home folder and run again. Nothing was written.',
  );
}

/** One server as the host will run it. */
export interface ServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Variables the host passes on from the environment it starts in, by name (Codex's env_vars). */
  envVars?: string[];
}

export interface Host {
  id: HostId;
  name: string;
  format: 'json' | 'toml';
  /** JSON: the top-level object that maps names to servers. */
  container: 'mcpServers' | 'servers';
  /** Whether the host keeps the key itself (asking for it once) rather than in its config file. */
  asksForKey: boolean;
  /**
   * How the host's config names the key in the environment, for files that must not hold it.
   * None for Claude Desktop (it expands nothing) and Codex (it forwards variables only by name).
   */
  keyReference?: string;
  /** The host passes a variable of its own environment on by name (Codex: env_vars = ["ENGAGE_API_KEY"]). */
  forwardsKeyByName?: boolean;
  /**
   * What the host replaces in a server's env values when it reads the file (a variable, a default),
   * with no way to escape it: a key holding it would reach the server changed.
   */
  expandsInValues?: RegExp;
  /**
   * The host's own reader takes comments in a JSON config, and trailing commas where said (VS Code's
   * JSONC parser; Gemini CLI strips comments only). Absent: plain JSON, which setup keeps to.
   */
  jsonc?: { trailingCommas: boolean };
  configPath(environment: Environment): string;
  /** The entry in the host's own shape. */
  shape(entry: ServerEntry): Record<string, unknown>;
}

/** A variable set to the empty string counts as unset, as the hosts themselves read it. */
const setTo = (value: string | undefined): string | undefined => (value === '' ? undefined : value);

/**
 * `$XDG_CONFIG_HOME` when it is an absolute path. The XDG spec has a relative one ignored: taken as
 * given it would name a folder under wherever setup runs, not where the host looks.
 */
const xdgConfigHome = (value: string | undefined): string | undefined => (value !== undefined && isAbsolute(value) ? value : undefined);

/** The folder where a desktop app keeps its per-user settings on each system. */
function appDataDir({ platform, home, env }: Environment, app: string): string {
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', app);
  if (platform === 'win32') return join(setTo(env.APPDATA) ?? join(home, 'AppData', 'Roaming'), app);
  return join(xdgConfigHome(env.XDG_CONFIG_HOME) ?? join(home, '.config'), app);
}

const plain = (entry: ServerEntry) => ({ command: entry.command, args: entry.args, env: entry.env });
const typedStdio = (entry: ServerEntry) => ({ type: 'stdio', command: entry.command, args: entry.args, env: entry.env });

/** VS Code asks for an `${input:…}` once and keeps the answer in its secret storage. */
export const VSCODE_KEY_INPUT = {
  type: 'promptString',
  id: 'engage-api-key',
  description: 'Engage tenant API key (tenant console, API key settings)',
  password: true,
};

export const HOSTS: Record<HostId, Host> = {
  'claude-desktop': {
    id: 'claude-desktop',
    name: 'Claude Desktop',
    format: 'json',
    container: 'mcpServers',
    asksForKey: false,
    configPath: (environment) => join(appDataDir(environment, 'Claude'), 'claude_desktop_config.json'),
    shape: plain,
  },
  'claude-code': {
    id: 'claude-code',
    name: 'Claude Code',
    format: 'json',
    container: 'mcpServers',
    asksForKey: false,
    // Claude Code expands ${VAR} in .mcp.json from each person's environment.
    keyReference: '${ENGAGE_API_KEY}',
    // ${VAR} and ${VAR:-default}, in ~/.claude.json as in .mcp.json; a bare $VAR is left.
    expandsInValues: /\$\{[^}]*\}/,
    // User scope: every project. A project's shared .mcp.json takes the same shape (--config-path).
    configPath: ({ home }) => join(home, '.claude.json'),
    shape: typedStdio,
  },
  vscode: {
    id: 'vscode',
    name: 'VS Code',
    format: 'json',
    container: 'servers',
    asksForKey: true,
    // Read with VS Code's JSONC parser, trailing commas allowed (mcpResourceScannerService).
    jsonc: { trailingCommas: true },
    configPath: (environment) => join(appDataDir(environment, 'Code'), 'User', 'mcp.json'),
    shape: (entry) => typedStdio({ ...entry, env: { ...entry.env, ENGAGE_API_KEY: `\${input:${VSCODE_KEY_INPUT.id}}` } }),
  },
  cursor: {
    id: 'cursor',
    name: 'Cursor',
    format: 'json',
    container: 'mcpServers',
    asksForKey: false,
    // Cursor's mcp.json interpolates ${env:NAME}.
    keyReference: '${env:ENGAGE_API_KEY}',
    // ${env:NAME}, ${userHome}, ${workspaceFolder} and the like.
    expandsInValues: /\$\{[^}]*\}/,
    configPath: ({ home }) => join(home, '.cursor', 'mcp.json'),
    shape: plain,
  },
  codex: {
    id: 'codex',
    name: 'Codex',
    format: 'toml',
    container: 'mcpServers',
    asksForKey: false,
    forwardsKeyByName: true,
    configPath: ({ home, env }) => join(setTo(env.CODEX_HOME) ?? join(home, '.codex'), 'config.toml'),
    shape: plain,
  },
  gemini: {
    id: 'gemini',
    name: 'Gemini CLI',
    format: 'json',
    container: 'mcpServers',
    asksForKey: false,
    // Gemini CLI expands $VAR and ${VAR} in a server's env.
    keyReference: '${ENGAGE_API_KEY}',
    expandsInValues: /\$(?:\w|\{[^}]*\})/,
    // JSON.parse(stripJsonComments(text)): comments go, a trailing comma stays and is refused.
    jsonc: { trailingCommas: false },
    configPath: ({ home }) => join(home, '.gemini', 'settings.json'),
    shape: plain,
  },
};

export const HOST_IDS = Object.keys(HOSTS) as HostId[];

/**
 * How a host starts a published server. Hosts run it in the folder they were opened in, and npx
 * takes that folder for its project: a repository's own node_modules/.bin would run in place of
 * our package and its .npmrc would choose the registry and cache. `--prefix <home>` makes the
 * user's home npx's project wherever it runs (not written on Windows, where it is not tested). On
 * native Windows npx is a .cmd shim, which Claude Code spawns without a shell and so cannot start;
 * `cmd /c` resolves it (the usual fix for its "Connection closed" there).
 */
export function launchCommand(
  host: Host,
  packageName: string,
  { platform, home }: Pick<Environment, 'platform' | 'home'>,
  { ownFile = true }: { ownFile?: boolean } = {},
): Pick<ServerEntry, 'command' | 'args'> {
  // A shared file (a project's, checked in) gets no one person's home; its project is trusted to say what runs.
  const npx = [...(platform === 'win32' || !ownFile ? [] : ['--prefix', home]), '-y', packageName];
  if (platform === 'win32' && host.id === 'claude-code') return { command: 'cmd', args: ['/c', 'npx', ...npx] };
  return { command: 'npx', args: npx };
}
