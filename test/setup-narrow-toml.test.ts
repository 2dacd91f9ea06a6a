// Setup refuses a Codex config.toml only for what its own edit touches. Another server written with
// dotted keys at the top (mcp_servers.other.command = "x", as TOML allows) used to refuse the whole
// file, though our [mcp_servers.<name>] tables may follow it; mcp_servers itself as an inline table
// (which no table may be added to) and our own servers in a form setup does not edit still are.
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-narrow-toml-');
const KEY = 'sk_live_43b8d2f6a0c4e8b2d6f0';

const setupOver = (text: string) => setupOverConfig(home.dir, 'codex', text, KEY);

describe('other servers as dotted keys at the top', () => {
  it.each([
    ['one dotted key', 'mcp_servers.other.command = "x"\n'],
    ['an inline table under mcp_servers', 'model = "o3"\nmcp_servers.other = { command = "x", args = ["--port", "8080"] }\n'],
  ])('%s: merged, their lines kept byte for byte, both servers read', async (_, text) => {
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(after.startsWith(text)).toBe(true);
    const servers = (parseToml(after) as { mcp_servers: Record<string, { command: string }> }).mcp_servers;
    expect(servers.other?.command).toBe('x');
    expect(servers['engage-contact']?.command).toBe('npx');
  });
});

describe('forms that are still refused', () => {
  it.each([
    ['mcp_servers as an inline table', 'mcp_servers = { other = { command = "x" } }\n', 'sets mcp_servers as a value or dotted key'],
    ['our server as dotted keys', 'mcp_servers.engage-contact.command = "x"\n', 'sets mcp_servers.engage-contact as a value or dotted key'],
  ])('%s: refused, the file left byte for byte', async (_, text, problem) => {
    const { path, ran, after } = await setupOver(text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} ${problem}`);
    expect(ran.stderr).toContain('Nothing was changed');
    expect(after).toBe(text);
  });
});
