// Review 29, the setup command against hostile JSON configs: an entry of ours already in the file
// as a remote server (a url, an http or sse type: the person's own, or the remote service added by
// hand under our name) was merged field by field with the local one asked for, keeping its url and
// type beside the new command: an entry that is neither, which a host reads as the remote server
// still or not at all. Such an entry is refused now, named, the file left as it is.
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-remote-');

async function setupOver(host: HostId, text: string) {
  return setupOverConfig(home.dir, host, text, 'sk_live_29e5a7c9b1d3f5a7c9e1');
}

describe('an entry of ours that is a remote server', () => {
  it.each([
    ['cursor', '{\n  "mcpServers": {\n    "engage-contact": { "url": "https://mcp.example.com/mcp" }\n  }\n}\n'],
    ['gemini', '{\n  "mcpServers": {\n    "engage-contact": { "httpUrl": "https://mcp.example.com/mcp" }\n  }\n}\n'],
    ['claude-code', '{\n  "mcpServers": {\n    "engage-contact": { "type": "http", "url": "https://mcp.example.com/mcp" }\n  }\n}\n'],
    ['vscode', '{\n  "servers": {\n    "engage-contact": { "type": "sse", "command": "x" }\n  }\n}\n'],
  ] as const)('%s: refused, naming it, the file left byte for byte', async (host, text) => {
    const { path, ran, after } = await setupOver(host, text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path}: the existing "engage-contact" entry is a remote server`);
    expect(ran.stderr).toMatch(/nothing was changed/i);
    expect(after).toBe(text);
  });

  it('a local entry of ours, "type": "stdio" or none, is merged as before, keeping what the person added', async () => {
    const text = '{\n  "mcpServers": {\n    "engage-contact": { "type": "stdio", "command": "old", "disabled": false }\n  }\n}\n';
    const { ran, after } = await setupOver('claude-code', text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(after).mcpServers['engage-contact']).toMatchObject({ type: 'stdio', command: 'npx', disabled: false });
  });
});
