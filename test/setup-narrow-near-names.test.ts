// An entry named like one of ours but spelled otherwise (Engage-Contact, engage_contact,
// ENGAGE-CONTACT, "engage-contact " with a trailing space) was kept and ours added beside it, so the
// host ran both: two servers, the same tools twice, perhaps two keys. Setup cannot tell an old copy
// of ours from something of the person's to keep, so it refuses that file now, naming the entry,
// saying nothing was changed and what to do; JSON and Codex's TOML alike. Our own name already
// there is updated as before, and a name that only starts like ours is not taken for one.
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-narrow-near-');
const KEY = 'sk_live_43c7e1a5b9d3f7a1c5e9';

const setupOver = (host: HostId, text: string) => setupOverConfig(home.dir, host, text, KEY);

describe('a server named like ours, spelled otherwise', () => {
  it.each([
    ['cursor', 'Engage-Contact', '{\n  "mcpServers": {\n    "Engage-Contact": { "command": "old" }\n  }\n}\n'],
    ['cursor', 'engage_contact', '{\n  "mcpServers": {\n    "engage_contact": { "command": "old" }\n  }\n}\n'],
    ['claude-code', 'ENGAGE-CONTACT', '{\n  "mcpServers": {\n    "ENGAGE-CONTACT": { "command": "old" }\n  }\n}\n'],
    ['vscode', 'engage-contact ', '{\n  "servers": {\n    "engage-contact ": { "command": "old" }\n  }\n}\n'],
    ['codex', 'engage_contact', '[mcp_servers.engage_contact]\ncommand = "old"\n'],
    ['codex', 'Engage-Contact', '[mcp_servers."Engage-Contact"]\ncommand = "old"\n\n[mcp_servers."Engage-Contact".env]\nA = "b"\n'],
    ['codex', 'engage contact', 'mcp_servers."engage contact".command = "old"\n'],
  ] as const)('%s, %j: refused, naming it, the file left byte for byte', async (host, name, text) => {
    const { path, ran, after } = await setupOver(host, text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} has a server named ${JSON.stringify(name)}, which looks like engage-contact spelled another way`);
    expect(ran.stderr).toContain('Nothing was changed');
    expect(ran.stderr).toContain('Rename that entry to "engage-contact"');
    expect(after).toBe(text);
  });

  it('with ours there too: ours updated, theirs left as it is', async () => {
    const text = '{\n  "mcpServers": {\n    "Engage-Contact": { "command": "theirs" },\n    "engage-contact": { "command": "old" }\n  }\n}\n';
    const { ran, after } = await setupOver('cursor', text);
    expect(ran.code, ran.stderr).toBe(0);
    const servers = JSON.parse(after).mcpServers;
    expect(servers['Engage-Contact']).toEqual({ command: 'theirs' });
    expect(servers['engage-contact'].command).toBe('npx');
  });

  it.each([
    ['cursor', '{\n  "mcpServers": {\n    "engage-contacts": { "command": "x" },\n    "my-engage-contact": { "command": "y" }\n  }\n}\n'],
    ['codex', '[mcp_servers.engage-contacts]\ncommand = "x"\n'],
  ] as const)('%s, a different name that only looks alike in part: merged, ours added', async (host, text) => {
    const { ran, after } = await setupOver(host, text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(after.startsWith(text.replace(/\n {2}\}\n\}\n$/, ''))).toBe(true);
    expect(after).toMatch(/engage-contact"?[\]:]/);
  });
});
