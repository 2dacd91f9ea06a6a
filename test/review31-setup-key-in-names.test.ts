// Review 31, the key in setup's messages: setup never prints a value from the file, but its
// messages quote names from it (a project in a disabled note, a key given twice in our entry, a
// TOML table defined twice), and a file may hold the key in a name as well: a project folder named
// after it, a setting pasted as a key. The key was then printed whole, to a terminal that may be
// shared or recorded (a screenshot, a CI log). The live key is now shown as <your tenant API key>
// wherever a message would hold it.
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review31-key-');
const KEY = 'sk_live_31d4f6a8c0e2b4d6f8a1';

const setupOver = (host: HostId, text: string) => setupOverConfig(home.dir, host, text, KEY);

describe('the key in a name the file holds', () => {
  it.each([
    [
      'a Claude Code project named after it, in the disabled note',
      'claude-code',
      JSON.stringify({ projects: { [`/keys/${KEY}`]: { disabledMcpServers: ['engage-contact'] } }, mcpServers: {} }),
      0,
      'disabled in the project /keys/<your tenant API key>;',
    ],
    [
      'given twice as a key in our entry, in the refusal',
      'cursor',
      `{"mcpServers": {"engage-contact": {"command": "x", "env": {"${KEY}": "1", "${KEY}": "2"}}}}`,
      1,
      'has the key "<your tenant API key>" twice in one object',
    ],
    ['a TOML table defined twice, in the refusal', 'codex', `["${KEY}"]\na = 1\n["${KEY}"]\nb = 1\n`, 1, 'defines [<your tenant API key>] twice'],
  ] as const)('%s: shown as the placeholder', async (_, host, text, code, expected) => {
    const { ran } = await setupOver(host, text);
    expect(ran.code, ran.stderr).toBe(code);
    expect(`${ran.stdout}${ran.stderr}`).not.toContain(KEY);
    expect(`${ran.stdout}${ran.stderr}`).toContain(expected);
  });
});
