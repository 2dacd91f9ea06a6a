// What the published forms of the servers say about them: the npm package (its README), the MCP
// bundle (manifest.json) and the MCP registry entry (server.json). All of it is computed from the
// catalogs' manifests, each package's package.json and the one list of settings below, so the
// seven servers' descriptions cannot drift apart.
import { chmodSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DomainManifest } from '@engage-mcp/shared';
import { manifests } from './catalogs.js';

/** The checkout's root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface PackageJson {
  name: string;
  version: string;
  description: string;
  license: string;
  author: string;
  repository: { type: string; url: string; directory?: string };
  mcpName?: string;
  private?: boolean;
  bin: Record<string, string>;
  files: string[];
  engines: { node: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [field: string]: unknown;
}

export function readPackageJson(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as PackageJson;
}

/** The seven server packages, in catalog order, and the setup command's package. */
export const SERVER_DOMAINS = Object.keys(manifests());
export const PUBLISHED_PACKAGES = [...SERVER_DOMAINS.map((domain) => `packages/${domain}`), 'packages/setup'];

/** The host config key each server gets: `engage-contact`, as in mcp-config.example.json. */
export const serverKey = (domain: string) => `engage-${domain}`;

/** `https://github.com/owner/repo` from package.json's `git+https://…/repo.git`. */
export function repositoryWebUrl(pkg: PackageJson): string {
  return pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
}

/**
 * The settings a user gives a server, as the configuration contract names them. `bundle` is the
 * key in an MCP bundle's user_config (absent: not offered there, the default applies); `writes`
 * marks the settings that only matter to a server with an action tool.
 */
export interface Setting {
  env: string;
  title: string;
  description: string;
  required?: boolean;
  secret?: boolean;
  /** The server's own default, said as a string (what the environment would hold). */
  default?: string;
  choices?: string[];
  format?: 'string' | 'boolean' | 'number';
  placeholder?: string;
  bundle?: string;
  writes?: boolean;
}

export const SETTINGS: Setting[] = [
  {
    env: 'ENGAGE_API_KEY',
    title: 'API key',
    description: 'The tenant API key (tenant console, API key settings); give it only the scopes the assistant needs.',
    required: true,
    secret: true,
    bundle: 'api_key',
  },
  {
    env: 'ENGAGE_BASE_URL',
    title: 'API base address',
    description: 'The API base address: https, or http on loopback only (the local sandbox).',
    required: true,
    placeholder: 'https://api.example.com',
    bundle: 'base_url',
  },
  {
    env: 'ENGAGE_CONFIRM',
    title: 'Ask before',
    description:
      "What needs a person's yes: destructive (sending, replying, deleting), all (every change), or none; then operation patterns to add or, with -, remove (destructive,campaign.create).",
    default: 'destructive',
    bundle: 'confirm',
    writes: true,
  },
  {
    env: 'ENGAGE_READ_ONLY',
    title: 'Read only',
    description: 'true: offer no tool that changes anything.',
    default: 'false',
    format: 'boolean',
    bundle: 'read_only',
    writes: true,
  },
  {
    env: 'ENGAGE_OPERATIONS_ALLOW',
    title: 'Allowed operations',
    description: 'Comma list of operationIds to offer, * allowed (campaign.*, *.list); empty offers all.',
    bundle: 'operations_allow',
  },
  {
    env: 'ENGAGE_OPERATIONS_DENY',
    title: 'Denied operations',
    description: 'Comma list of operationIds to remove (*.delete); deny wins over allow.',
    bundle: 'operations_deny',
  },
  {
    env: 'ENGAGE_CAP_RECIPIENTS_PER_SEND',
    title: 'Most recipients per send',
    description: 'A campaign.send to more recipients than this is refused; empty: no cap.',
    format: 'number',
    bundle: 'cap_recipients_per_send',
    writes: true,
  },
  {
    env: 'ENGAGE_CAP_MESSAGES_PER_DAY',
    title: 'Most messages per day',
    description: 'Per key and local day: campaign recipients, WhatsApp sends, ticket replies and tickets opened with a message, together; empty: no cap.',
    format: 'number',
    bundle: 'cap_messages_per_day',
    writes: true,
  },
  {
    env: 'ENGAGE_QUIET_HOURS',
    title: 'Quiet hours',
    description: 'HH:MM-HH:MM local time (21:00-08:00): sends inside are refused unless the user overrides them explicitly.',
    placeholder: '21:00-08:00',
    bundle: 'quiet_hours',
    writes: true,
  },
  {
    env: 'ENGAGE_TIMEZONE',
    title: 'Time zone',
    description: 'IANA name (Asia/Jakarta) for quiet hours and the daily cap.',
    default: 'UTC',
    bundle: 'timezone',
    writes: true,
  },
  {
    env: 'ENGAGE_STATE_DIR',
    title: 'State directory',
    description: 'Where counters, idempotency keys and the audit record are kept; default $XDG_STATE_HOME/engage-mcp or ~/.local/state/engage-mcp.',
    writes: true,
  },
  {
    env: 'ENGAGE_AUDIT_LOG',
    title: 'Audit record file',
    description: 'The audit record (one chained JSON line per write); default audit.jsonl in the state directory.',
    writes: true,
  },
  {
    env: 'ENGAGE_AUTH_HEADER',
    title: 'Key header',
    description: 'How the key is sent: x-api-key, or bearer (Authorization: Bearer).',
    default: 'x-api-key',
    choices: ['x-api-key', 'bearer'],
    bundle: 'auth_header',
  },
  { env: 'ENGAGE_TIMEOUT_MS', title: 'Timeout (ms)', description: 'Per request, headers and body together.', default: '30000', format: 'number' },
  {
    env: 'ENGAGE_MAX_RETRY_WAIT_S',
    title: 'Longest rate-limit wait (s)',
    description: 'The longest Retry-After waited before answering "try again in N s".',
    default: '60',
    format: 'number',
  },
  {
    env: 'ENGAGE_LOG_LEVEL',
    title: 'Log level',
    description: 'error, warn, info or debug; logs go to stderr.',
    default: 'warn',
    choices: ['error', 'warn', 'info', 'debug'],
  },
];

export function hasActionTool(manifest: DomainManifest): boolean {
  return manifest.tools.some((tool) => tool.kind === 'action');
}

/** The settings that mean something to this server (billing and tenant have nothing to confirm). */
export function settingsFor(manifest: DomainManifest): Setting[] {
  return SETTINGS.filter((setting) => !setting.writes || hasActionTool(manifest));
}

/** One line per tool for a catalog page: its title and the operations it holds, with their risk. */
export function toolSummary(tool: DomainManifest['tools'][number]): string {
  return `${tool.title} (${tool.operations.map((op) => (op.risk === 'safe' ? op.id : `${op.id}, ${op.risk}`)).join('; ')})`;
}

/** package.json as published: devDependencies are the workspace's build inputs, not the user's. */
export function publishedPackageJson(pkg: PackageJson): string {
  const { devDependencies: _buildInputs, ...published } = pkg;
  if (published.exports) published.exports = withoutSourceCondition(published.exports);
  return `${JSON.stringify(published, null, 2)}\n`;
}

/** The workspace's sources are exported under this condition; a published package ships only dist/. */
export const SOURCE_CONDITION = '@engage-mcp/source';

function withoutSourceCondition(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null) return exports;
  const kept = Object.entries(exports).filter(([key]) => key !== SOURCE_CONDITION);
  return Object.fromEntries(kept.map(([key, value]) => [key, withoutSourceCondition(value)]));
}

/** The config entry that runs a published server: `npx -y @engage-mcp/<domain>`. */
export function npxEntry(pkg: PackageJson) {
  return { command: 'npx', args: ['-y', pkg.name] };
}

/**
 * Gives a staged package's files the modes everyone installs: 0755 for a folder and for a file
 * with any execute bit, 0644 for the rest. Both npm's tarball and an MCP bundle record each file's
 * mode, which was the builder's: the files this staging writes took the builder's umask (077 made
 * package.json and manifest.json 0600), so two builds of one commit differed, and a bundle could
 * carry files only the builder's uid may read.
 */
export function publishedModes(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) {
      chmodSync(path, 0o755);
      publishedModes(path);
    } else chmodSync(path, stat.mode & 0o111 ? 0o755 : 0o644);
  }
}
