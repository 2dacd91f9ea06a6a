// Review 31, setup's messages against a hostile config (a repository's .mcp.json or
// .codex/config.toml, say): a message that quotes the file (a project in a disabled note, a server
// named like ours, a key given twice in our entry, a table defined twice, the character after a
// statement) wrote what the file held to the terminal as it was. A project path holding ESC set the
// window's title, and one holding line breaks printed lines of its own ("Wrote /x", "Done") that
// setup never wrote; JSON.stringify escapes C0 controls only, so U+009B (a whole escape sequence's
// start in many terminals), a bidi override or a line separator went through. Now each is shown
// quoted, every such character escaped (\u001b), and a plain name or path stays as it is.
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review31-terminal-');
const KEY = 'sk_live_31a7c9e1b3d5f7a9c2e4';

/** Any character a terminal takes for a command or does not show as itself, the line feed aside. */
const UNSHOWN = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

const setupOver = (host: HostId, text: string) => setupOverConfig(home.dir, host, text, KEY);

describe('what the file holds, quoted in a message', () => {
  it('a Claude Code project in a disabled note: escaped, no line of its own, nothing sent to the terminal', async () => {
    const project = '/a\u001b]0;PWNED\u0007\nWrote /x (a fake line)\nDone';
    const text = JSON.stringify({ projects: { [project]: { disabledMcpServers: ['engage-contact'] } }, mcpServers: {} });
    const { ran } = await setupOver('claude-code', text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).not.toMatch(UNSHOWN);
    expect(ran.stdout.split('\n').filter((line) => /^(?:Wrote|Done)/.test(line))).toHaveLength(1);
    expect(ran.stdout).toContain(
      'engage-contact: Claude Code has it disabled in the project "/a\\u001b]0;PWNED\\u0007\\nWrote /x (a fake line)\\nDone"; enable it there with /mcp.',
    );
  });

  it.each([
    [
      'a server named like ours with a line separator',
      'cursor',
      '{"mcpServers": {"engage-contact\\u2028": {"command": "x"}}}',
      'has a server named "engage-contact\\u2028", which looks like',
    ],
    [
      'a key given twice in our entry, with U+009B and a bidi override',
      'cursor',
      '{"mcpServers": {"engage-contact": {"command": "x", "env": {"\\u009b31mX\\u202e": "1", "\\u009b31mX\\u202e": "2"}}}}',
      'has the key "\\u009b31mX\\u202e" twice in one object',
    ],
    [
      'a TOML table defined twice, its name holding ESC',
      'codex',
      '["a\\e]0;PWNED\\u0007"]\nx = 1\n["a\\e]0;PWNED\\u0007"]\ny = 1\n',
      'defines ["a\\u001b]0;PWNED\\u0007"] twice',
    ],
    ['U+009B after a TOML statement', 'codex', 'a = 1\u009b31m\n', 'unexpected "\\u009b" after a complete statement'],
  ] as const)('%s: refused, the character escaped', async (_, host, text, expected) => {
    const { ran, after } = await setupOver(host, text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(expected);
    expect(ran.stderr).not.toMatch(UNSHOWN);
    expect(after).toBe(text);
  });

  it('a plain project path stays as it is', async () => {
    const text = JSON.stringify({ projects: { 'C:\\work\\my app': { disabledMcpServers: ['engage-contact'] } }, mcpServers: {} });
    const { ran } = await setupOver('claude-code', text);
    expect(ran.stdout).toContain('disabled in the project C:\\work\\my app; enable it');
  });
});
