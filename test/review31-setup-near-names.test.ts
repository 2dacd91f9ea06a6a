// Review 31, servers named like ours: a name that differs from ours only by a character that shows
// as nothing (a zero-width space or a soft hyphen after "engage-contact") or by a dash NFKC keeps
// (U+2010, as a word processor writes a hyphen) was not taken for ours spelled otherwise, so ours
// was added beside it and the host ran both, the same tools twice, the names looking the same in
// every list. Those are set aside in the comparison now: the file is refused, the entry named with
// the hidden character escaped.
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review31-near-');
const KEY = 'sk_live_31c3e5a7b9d1f3a5c7e9';

const setupOver = (host: HostId, text: string) => setupOverConfig(home.dir, host, text, KEY);

describe('a server named like ours but for a hidden character or another dash', () => {
  it.each([
    ['cursor', 'a zero-width space after it', '{\n  "mcpServers": {\n    "engage-contact\\u200b": { "command": "old" }\n  }\n}\n', '"engage-contact\\u200b"'],
    ['gemini', 'a soft hyphen in it', '{\n  "mcpServers": {\n    "engage-con\\u00adtact": { "command": "old" }\n  }\n}\n', '"engage-con\\u00adtact"'],
    ['claude-code', 'U+2010 for its hyphen', '{\n  "mcpServers": {\n    "engage\u2010contact": { "command": "old" }\n  }\n}\n', '"engage\u2010contact"'],
    ['codex', 'a zero-width joiner in a TOML name', '[mcp_servers."engage\\u200dcontact"]\ncommand = "old"\n', '"engage\\u200dcontact"'],
  ] as const)('%s, %s: refused, naming it', async (host, _, text, shownName) => {
    const { path, ran, after } = await setupOver(host, text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} has a server named ${shownName}, which looks like engage-contact spelled another way`);
    expect(after).toBe(text);
  });

  it('a name with other letters around a dash is still a name of its own: ours added', async () => {
    const text = '{\n  "mcpServers": {\n    "engage\u2010contacts": { "command": "x" }\n  }\n}\n';
    const { ran, after } = await setupOver('cursor', text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(Object.keys(JSON.parse(after).mcpServers)).toEqual(['engage\u2010contacts', 'engage-contact']);
  });
});
