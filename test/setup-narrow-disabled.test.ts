// An engage entry the person turned off was kept so (their choice) yet reported as set up, though
// the host will not start it. The done text (and the "nothing to change" one) now says which of our
// servers the file keeps turned off, by the host's own switch, and how to turn each on: Codex's
// enabled = false, Gemini CLI's mcp.excluded and mcp.allowed, Claude Code's per-project
// disabledMcpServers in ~/.claude.json, and "disabled": true in an entry. The setting stays as it was.
import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-narrow-disabled-');
const KEY = 'sk_live_43d6f0b4c8e2a6d0f4b8';

const setupOver = (host: HostId, text: string) => setupOverConfig(home.dir, host, text, KEY);

describe('one of our servers turned off in the file', () => {
  it.each([
    [
      'cursor',
      '{\n  "mcpServers": {\n    "engage-contact": { "command": "old", "disabled": true }\n  }\n}\n',
      'engage-contact: its entry has "disabled": true, which turns a server off in the hosts that honour that field; delete that line to be sure Cursor starts it.',
    ],
    [
      'codex',
      '[mcp_servers.engage-contact]\ncommand = "old"\nenabled = false # for now\n',
      'engage-contact: Codex will not start it, as its table has enabled = false; set enabled = true or delete that line to start it.',
    ],
    [
      'gemini',
      '{\n  "mcp": { "excluded": ["engage-contact"] },\n  "mcpServers": {}\n}\n',
      'engage-contact: Gemini CLI skips it, as mcp.excluded lists it; take it out of that list to start it.',
    ],
    [
      'gemini',
      '{\n  "mcp": { "allowed": ["other"] },\n  "mcpServers": {}\n}\n',
      'engage-contact: Gemini CLI starts only the servers mcp.allowed lists, and it does not list this one; add it there to start it.',
    ],
    [
      'claude-code',
      '{\n  "projects": { "/work/app": { "disabledMcpServers": ["engage-contact"] } },\n  "mcpServers": {}\n}\n',
      'engage-contact: Claude Code has it disabled in the project /work/app; enable it there with /mcp.',
    ],
  ] as const)('%s: said after writing, and again when there is nothing to change; the setting kept', async (host, text, note) => {
    const { ran, after } = await setupOver(host, text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`Turned off in the file (your setting, kept):\n  ${note}\n`);
    const again = await setupWithKey(home.dir, host, KEY);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to change');
    expect(again.stdout).toContain(note);
    if (host === 'codex') expect((parseToml(after) as any).mcp_servers['engage-contact'].enabled).toBe(false);
    else if (host === 'cursor') expect(JSON.parse(after).mcpServers['engage-contact'].disabled).toBe(true);
    else expect(JSON.parse(after).mcp ?? JSON.parse(after).projects).toEqual(JSON.parse(text).mcp ?? JSON.parse(text).projects);
  });

  it.each([
    ['cursor', '{\n  "mcpServers": {\n    "engage-contact": { "command": "old", "disabled": false }\n  }\n}\n'],
    ['codex', '[mcp_servers.engage-contact]\ncommand = "old"\nenabled = true\n\n[mcp_servers.other]\ncommand = "x"\nenabled = false\n'],
    ['gemini', '{\n  "mcp": { "excluded": ["other"], "allowed": ["engage-contact"] },\n  "mcpServers": {}\n}\n'],
  ] as const)('%s, ours on (another server off): nothing said', async (host, text) => {
    const { ran } = await setupOver(host, text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toContain('Turned off');
  });
});
