// Run over an entry that `claude mcp add` or a hand wrote (npx -y, no --prefix), with the same key
// and address, setup said "its command, ENGAGE_API_KEY, ENGAGE_BASE_URL changed": each setting was
// compared with the file as it was, so the new command showed in every one. Only what changes is
// named now (README, Install: "it lists, per server, what it added or changed").
import { expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-changed-names-');
const KEY = 'sk_live_2f8c4a6e0b9d1f3a5c7e';
const entry = (env: Record<string, string>) => ({ command: 'npx', args: ['-y', '@engage-mcp/contact'], env });

it.each([
  ['cursor', 'its command changed', { mcpServers: { 'engage-contact': entry({ ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://api.example.com' }) } }],
  [
    'cursor',
    'its command, ENGAGE_API_KEY changed',
    { mcpServers: { 'engage-contact': entry({ ENGAGE_API_KEY: 'sk_live_an_old_key_00000', ENGAGE_BASE_URL: 'https://api.example.com' }) } },
  ],
  [
    'claude-code',
    'its command changed',
    { mcpServers: { 'engage-contact': { type: 'stdio', ...entry({ ENGAGE_BASE_URL: 'https://api.example.com', ENGAGE_API_KEY: KEY }) } } },
  ],
] as const)('%s: a new command says only "%s"', async (host, said, config) => {
  const { ran } = await setupOverConfig(home.dir, host, `${JSON.stringify(config, null, 2)}\n`, KEY);
  expect(ran.code, ran.stderr).toBe(0);
  expect(ran.stdout).toContain(`engage-contact: ${said}\n`);
});

it('codex: the same for its TOML table', async () => {
  const toml = `[mcp_servers.engage-contact]\ncommand = "npx"\nargs = ["-y", "@engage-mcp/contact"]\n\n[mcp_servers.engage-contact.env]\nENGAGE_API_KEY = "${KEY}"\nENGAGE_BASE_URL = "https://api.example.com"\n`;
  const { ran } = await setupOverConfig(home.dir, 'codex', toml, KEY);
  expect(ran.code, ran.stderr).toBe(0);
  expect(ran.stdout).toContain('engage-contact: its command changed\n');
});
