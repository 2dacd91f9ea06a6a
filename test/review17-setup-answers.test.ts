// Review 17, setup's questions answered as they are shown: the host question lists
// "4. Cursor (cursor)", but only the number or the id in brackets was taken, so a person typing
// the name they read ("Cursor", "VS Code", "Claude Desktop") was told "unknown host" and the run
// ended, every answer lost. The same for servers named with a capital ("Contact"). Names are taken
// now as shown, in any letter case, with a blank or a dash alike.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setupWith } from './setup-run.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review17-answers-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const printFor = (host: string, servers = 'contact') => setupWith(home, ['--host', host, '--servers', servers, '--print'], '');

describe('a host named as the question shows it', () => {
  it.each([
    ['Cursor', '"mcpServers"'],
    ['VS Code', '"servers"'],
    ['vs-code', '"servers"'],
    ['Claude Desktop', '"mcpServers"'],
    ['claude code', '"type": "stdio"'],
    ['Gemini CLI', '"mcpServers"'],
    ['CODEX', '[mcp_servers.engage-contact]'],
  ])('%s', async (host, shape) => {
    const ran = await printFor(host);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(shape);
  });

  it('a name that is no host is still refused, with the list', async () => {
    const ran = await printFor('Zed');
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/unknown host "Zed": one of claude-desktop/);
  });
});

describe('servers named with capitals', () => {
  it('"Contact, Campaign" is contact and campaign', async () => {
    const ran = await printFor('cursor', 'Contact, Campaign');
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('"engage-contact"');
    expect(ran.stdout).toContain('"engage-campaign"');
  });
});
