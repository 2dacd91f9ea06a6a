// Review 18: the README's settings tables are all a user has to set up a server, so every ENGAGE_*
// setting the configuration modules read has a row there, and the defaults and ranges the rows
// give are the ones the code applies (a value outside a range is a configuration error).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@engage-mcp/shared';
import { readHttpSettings } from '../packages/http/src/settings.js';

const README = readFileSync('README.md', 'utf8');
const STDIO_CONFIG = readFileSync('shared/src/model/config.ts', 'utf8');
const HTTP_SETTINGS = readFileSync('packages/http/src/settings.ts', 'utf8');
const REQUIRED = { ENGAGE_API_KEY: 'eng_live_docs_pin_0123456789', ENGAGE_BASE_URL: 'https://api.example.com' };

/** The README's table row for a setting; `after` picks the one under that heading (a name can have a row per mode). */
function row(name: string, after = '## Configuration'): string {
  const from = README.indexOf(`\n${after}\n`);
  expect(from, after).toBeGreaterThanOrEqual(0);
  const found = README.slice(from)
    .split('\n')
    // The row that names it in its first cell (another row's text may mention it).
    .find((line) => line.startsWith('|') && (line.split('|')[1] ?? '').includes(`\`${name}\``));
  expect(found, `README row for ${name} under ${after}`).toBeDefined();
  return found as string;
}

const stdio = (env: Record<string, string>) => loadConfig({ ...REQUIRED, ...env }, 'campaign', ['campaign.send']);
const remote = (env: Record<string, string>) => readHttpSettings(env);

describe('every setting the code reads is in the README', () => {
  // Names in the code, not its comments: a comment may name a family (`ENGAGE_CAP_*`) or a
  // misspelling the code warns of (`ENGAGE_READONLY`), neither of them a setting.
  const withoutComments = (source: string) => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const names = (source: string) => [...new Set(withoutComments(source).match(/\bENGAGE_[A-Z]+(?:_[A-Z]+)*\b/g) ?? [])];

  it.each(names(STDIO_CONFIG).concat(names(HTTP_SETTINGS)))('%s has a table row', (name) => {
    expect(README).toContain(`| \`${name}\``);
  });
});

describe('the defaults the README gives are the code’s', () => {
  it('stdio servers', () => {
    const loaded = stdio({ XDG_STATE_HOME: '/xdg-state' });
    if (!loaded.ok) throw new Error(loaded.problems.join(' '));
    const { config } = loaded;
    expect([config.timeoutMs, config.maxRetryWaitSeconds]).toEqual([30000, 60]);
    expect(row('ENGAGE_TIMEOUT_MS')).toContain('default 30000');
    expect(row('ENGAGE_MAX_RETRY_WAIT_S')).toContain('default 60');
    expect([config.authHeader, config.confirm, config.logLevel]).toEqual(['x-api-key', 'destructive', 'warn']);
    expect(row('ENGAGE_AUTH_HEADER')).toContain('`x-api-key` (default)');
    expect(row('ENGAGE_CONFIRM')).toContain('`destructive` (default)');
    expect(row('ENGAGE_LOG_LEVEL')).toContain('`warn` (default)');
    expect(config.readOnly).toBe(false);
    expect(config.guardrails.timeZone).toBe('UTC');
    expect(row('ENGAGE_TIMEZONE', '## Guardrails')).toContain('default `UTC`');
    expect(config.guardrails.stateDir).toBe('/xdg-state/engage-mcp');
    expect(config.guardrails.auditLog).toBe('/xdg-state/engage-mcp/audit.jsonl');
    expect(row('ENGAGE_STATE_DIR', '## Guardrails')).toContain('default `$XDG_STATE_HOME/engage-mcp`, else `~/.local/state/engage-mcp`');
    expect(row('ENGAGE_AUDIT_LOG', '## Guardrails')).toContain('default `audit.jsonl` in the state directory');
    const withoutXdg = stdio({ HOME: '/home/me' });
    expect(withoutXdg.ok && withoutXdg.config.guardrails.stateDir).toBe('/home/me/.local/state/engage-mcp');
  });

  it('remote mode', () => {
    const read = remote({});
    if (!read.ok) throw new Error(read.problems.join(' '));
    const { settings } = read;
    const under = '## Remote mode: one HTTPS service for many tenants';
    expect([settings.host, settings.port]).toEqual(['127.0.0.1', 8787]);
    expect(row('ENGAGE_HTTP_HOST', under)).toContain('default `127.0.0.1`');
    expect(row('ENGAGE_HTTP_PORT', under)).toContain('default `8787`');
    expect(settings.maxConcurrentPerKey).toBe(16);
    expect(row('ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY', under)).toContain('default 16');
    expect(settings.maxBodyBytes).toBe(4 * 1024 * 1024 + 64 * 1024);
    expect(row('ENGAGE_HTTP_MAX_BODY_BYTES', under)).toContain('default 4 MiB + 64 KiB');
    expect([settings.requestTimeoutMs, settings.drainTimeoutMs, settings.drainDelayMs]).toEqual([720000, 30000, 0]);
    expect(row('ENGAGE_HTTP_REQUEST_TIMEOUT_MS', under)).toContain('default 720000');
    expect(row('ENGAGE_HTTP_DRAIN_TIMEOUT_MS', under)).toContain('default 30000');
    expect(row('ENGAGE_HTTP_DRAIN_DELAY_MS', under)).toContain('default 0');
    expect(settings.logLevel).toBe('info');
    expect(row('ENGAGE_LOG_LEVEL', under)).toContain('`info` (default here');
    const oauth = remote({ ENGAGE_OAUTH_KEK: 'ab'.repeat(32), ENGAGE_PUBLIC_URL: 'https://mcp.example.com' });
    expect(oauth.ok && oauth.settings.oauth).toMatchObject({ keyMode: true, trustedProxyHops: 0 });
    expect(row('ENGAGE_OAUTH_KEY_MODE', under)).toContain('`on` (default)');
    expect(row('ENGAGE_TRUSTED_PROXY_HOPS', under)).toContain('default 0');
  });
});

describe('the ranges the README gives are the code’s', () => {
  const MiB = 1024 * 1024;
  // [setting, mode, lowest accepted, highest accepted, as the README's row says it]
  const ranges: Array<[string, 'stdio' | 'remote', number, number, string]> = [
    ['ENGAGE_TIMEOUT_MS', 'stdio', 100, 600_000, '100 to 600000'],
    ['ENGAGE_MAX_RETRY_WAIT_S', 'stdio', 0, 3_600, '0 to 3600'],
    ['ENGAGE_CAP_RECIPIENTS_PER_SEND', 'stdio', 0, 10_000_000, '0 to 10,000,000'],
    ['ENGAGE_CAP_MESSAGES_PER_DAY', 'stdio', 0, 10_000_000, '0 to 10,000,000'],
    ['ENGAGE_HTTP_MAX_CONCURRENT_PER_KEY', 'remote', 1, 10_000, '1 to 10000'],
    ['ENGAGE_HTTP_MAX_BODY_BYTES', 'remote', 1_024, 64 * MiB, '1024 to 64 MiB'],
    ['ENGAGE_HTTP_REQUEST_TIMEOUT_MS', 'remote', 1_000, 3_600_000, '1000 to 3600000'],
    ['ENGAGE_HTTP_DRAIN_TIMEOUT_MS', 'remote', 0, 600_000, '0 to 600000'],
    ['ENGAGE_HTTP_DRAIN_DELAY_MS', 'remote', 0, 60_000, 'up to 60000'],
    ['ENGAGE_TRUSTED_PROXY_HOPS', 'remote', 0, 10, 'at most 10'],
  ];

  it.each(ranges)('%s (%s): %d to %d', (name, mode, lowest, highest, said) => {
    const heading =
      mode === 'stdio' ? (name.startsWith('ENGAGE_CAP_') ? '## Guardrails' : '## Configuration') : '## Remote mode: one HTTPS service for many tenants';
    expect(row(name, heading)).toContain(said);
    const accepts = (value: number) => (mode === 'stdio' ? stdio({ [name]: String(value) }) : remote({ [name]: String(value) })).ok;
    expect([accepts(lowest), accepts(highest), accepts(highest + 1)]).toEqual([true, true, false]);
    if (lowest > 0) expect(accepts(lowest - 1)).toBe(false);
  });
});
