// Review 5, Codex's config.toml: (1) a file whose last line is one of our table headers, with no
// newline after it, was refused with "internal error: the merged file would not be valid TOML"
// (the keys were put on the header's own line); (2) a project file whose server already had an
// env_vars of the person's own lost those names: env_vars was replaced by ["ENGAGE_API_KEY"].
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { mergeTomlConfig } from '../packages/setup/src/toml-config.js';
import { ConfigRefused } from '../packages/setup/src/config-error.js';
import { ROOT } from '../scripts/distribution.js';

const CLI = join(ROOT, 'packages', 'setup', 'dist', 'cli.js');
const KEY = 'sk_live_9f2c4e7a1b3d5f8a6c0e';
const args = ['-y', '@engage-mcp/contact'];
const keyed = { 'engage-contact': { command: 'npx', args, env: { ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://a.example' } } };
const forwarded = { 'engage-contact': { command: 'npx', args, envVars: ['ENGAGE_API_KEY'], env: { ENGAGE_BASE_URL: 'https://a.example' } } };
const serverOf = (text: string) => (parseToml(text) as any).mcp_servers['engage-contact'];

describe('a header on the last line, no newline after it', () => {
  it.each([
    ['our table', '[mcp_servers.engage-contact]'],
    ['our table, CRLF', 'model = "o3"\r\n[mcp_servers.engage-contact]'],
    ['our env table', '[mcp_servers.engage-contact]\ncommand = "npx"\n[mcp_servers.engage-contact.env]'],
  ])('%s: the keys go on lines of their own', (_, existing) => {
    const merged = mergeTomlConfig(existing, keyed, 'config.toml');
    for (const line of existing.split(/\r?\n/)) expect(merged).toContain(line);
    expect(serverOf(merged)).toEqual({ command: 'npx', args, env: keyed['engage-contact'].env });
  });
});

describe('an env_vars of the person', () => {
  it('keeps its names and adds ENGAGE_API_KEY (and its comment)', () => {
    const existing = `[mcp_servers.engage-contact]\ncommand = "npx"\nenv_vars = ["HTTPS_PROXY", 'NODE_EXTRA_CA_CERTS'] # mine\n`;
    const merged = mergeTomlConfig(existing, forwarded, 'config.toml');
    expect(serverOf(merged).env_vars).toEqual(['HTTPS_PROXY', 'NODE_EXTRA_CA_CERTS', 'ENGAGE_API_KEY']);
    expect(merged).toContain('# mine');
    // Already there: nothing changes.
    expect(mergeTomlConfig(merged, forwarded, 'config.toml')).toBe(merged);
  });

  it('one already naming ENGAGE_API_KEY keeps its order', () => {
    const existing = `[mcp_servers.engage-contact]\ncommand = "npx"\nargs = ["-y", "@engage-mcp/contact"]\nenv_vars = ["ENGAGE_API_KEY", "FOO"]\n\n[mcp_servers.engage-contact.env]\nENGAGE_BASE_URL = "https://a.example"\n`;
    expect(mergeTomlConfig(existing, forwarded, 'config.toml')).toBe(existing);
  });

  it('one in a form not edited (not a list of one-line strings) is refused, nothing changed', () => {
    for (const value of ['"FOO"', '["FOO", 1]', '["""FOO"""]', '[["FOO"]]']) {
      const existing = `[mcp_servers.engage-contact]\nenv_vars = ${value}\n`;
      expect(() => mergeTomlConfig(existing, forwarded, 'config.toml')).toThrow(ConfigRefused);
    }
  });

  it('the built bin keeps them in a project file', async () => {
    const home = await mkdtemp(join(tmpdir(), 'engage-review5-'));
    try {
      const project = join(home, 'work', 'p');
      await mkdir(join(project, '.git'), { recursive: true });
      const path = join(project, '.codex', 'config.toml');
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, '[mcp_servers.engage-contact]\ncommand = "npx"\nenv_vars = ["HTTPS_PROXY"]\n');
      const ran = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [CLI, '--host', 'codex', '--servers', 'contact', '--base-url', 'https://a.example', '--key-stdin', '--yes', '--config-path', path],
          { env: { PATH: process.env.PATH, HOME: home }, cwd: home, stdio: ['pipe', 'pipe', 'pipe'] },
        );
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, out }));
        child.stdin.end('');
      });
      expect(ran.code, ran.out).toBe(0);
      const text = await readFile(path, 'utf8');
      expect(text).not.toContain(KEY);
      expect(serverOf(text).env_vars).toEqual(['HTTPS_PROXY', 'ENGAGE_API_KEY']);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
