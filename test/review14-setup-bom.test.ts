// Review 14, the setup command and odd existing configs: a config saved with a UTF-8 byte order
// mark (Windows Notepad before 2019, PowerShell 5's `Out-File -Encoding utf8`) was refused with a
// message naming no cause: "is not valid JSON (comments and trailing commas are not JSON
// either)" for JSON, "line 1: expected a key" for Codex's TOML. Neither parser takes the mark;
// the file is otherwise fine. Now the mark is kept as it was and the servers are merged after it.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import type { HostId } from '../packages/setup/src/hosts.js';
import { configPathIn, setupWithKey } from './setup-run.js';

const KEY = 'sk_live_9f2c4e7a1b3d5f8a6c0e';
const BOM = '\uFEFF';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'engage-review14-bom-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const configPath = (host: HostId) => configPathIn(home, host);

const setup = (host: HostId) => setupWithKey(home, host, KEY);

async function writeConfig(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

describe('a config that starts with a UTF-8 byte order mark', () => {
  it('JSON (Claude Desktop, CRLF as Notepad saves it): the servers are added, the mark and the other entries kept', async () => {
    const path = configPath('claude-desktop');
    await writeConfig(path, `${BOM}{\r\n  "mcpServers": {\r\n    "other": { "command": "x" }\r\n  }\r\n}\r\n`);
    const ran = await setup('claude-desktop');
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(text.startsWith(BOM)).toBe(true);
    expect(text.slice(1).startsWith('{\r\n')).toBe(true);
    const config = JSON.parse(text.slice(1));
    expect(config.mcpServers.other).toEqual({ command: 'x' });
    expect(config.mcpServers['engage-contact'].env.ENGAGE_API_KEY).toBe(KEY);
    // A second run finds nothing to change.
    const again = await setup('claude-desktop');
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toBe(text);
  });

  it('TOML (Codex): the tables are added, the mark and every other byte kept', async () => {
    const path = configPath('codex');
    const existing = `${BOM}model = "o3" # mine\n`;
    await writeConfig(path, existing);
    const ran = await setup('codex');
    expect(ran.code, ran.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(text.startsWith(existing)).toBe(true);
    expect((parseToml(text.slice(1)) as any).mcp_servers['engage-contact'].env.ENGAGE_API_KEY).toBe(KEY);
  });
});
