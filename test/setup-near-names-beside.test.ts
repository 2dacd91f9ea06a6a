// A file with our server and one named like it but spelled otherwise (Engage-Contact beside
// engage-contact, left by hand or by an older tool): setup updated ours and said nothing, though the
// host runs both, the same tools twice, maybe with an old key. Setup still keeps the person's entry,
// but now says so after what it did, naming that entry and what to do.
import { expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-near-beside-');
const KEY = 'sk_live_43c7e1a5b9d3f7a1c5e9';

it.each([
  ['cursor', 'Engage-Contact', '{\n  "mcpServers": {\n    "Engage-Contact": { "command": "theirs" },\n    "engage-contact": { "command": "old" }\n  }\n}\n'],
  ['codex', 'engage_contact', '[mcp_servers.engage_contact]\ncommand = "theirs"\n\n[mcp_servers.engage-contact]\ncommand = "old"\n'],
] as const)('%s: ours updated, %j kept, and the person told the host runs both', async (host, theirs, text) => {
  const { ran, after } = await setupOverConfig(home.dir, host as HostId, text, KEY);
  expect(ran.code, ran.stderr).toBe(0);
  expect(after).toContain('theirs');
  expect(ran.stdout).toContain('Also in the file (your entry, kept):');
  expect(ran.stdout).toContain(`${JSON.stringify(theirs)} looks like engage-contact spelled another way`);
  expect(ran.stdout).toMatch(/runs both, the same tools twice; remove it unless you mean to run both/);
});

it('with no such entry, no such note', async () => {
  const text = '{\n  "mcpServers": {\n    "engage-contacts": { "command": "x" }\n  }\n}\n';
  const { ran } = await setupOverConfig(home.dir, 'cursor', text, KEY);
  expect(ran.code, ran.stderr).toBe(0);
  expect(ran.stdout).not.toContain('Also in the file');
});
