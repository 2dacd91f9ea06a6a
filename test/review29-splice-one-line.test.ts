// Review 29, setup's in-place JSON edit against unusual configs: a JSON config on one line keeps
// our entry on that line, but one with a blank line before it (or a blank line and its JSON on the
// next) was taken for a file on many lines, as only a break before its last character was looked
// for: our entry went in spread over twelve indented lines inside the person's one-line object.
// Blank lines before the JSON count as little as those after it now.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-splice-line-');

describe('a JSON config on one line, after blank lines', () => {
  it.each([
    ['an empty container', '\n{"mcpServers":{}}\n'],
    ['a container with theirs', '\r\n\r\n{"mcpServers":{"other":{"command":"node"}}}'],
    ['no container yet', ' \n\t{"theme":"dark"}\n\n'],
    ['an entry of ours to update', '\n{"mcpServers":{"engage-contact":{"command":"old"}}}\n'],
  ])('%s: our entry stays on its line; the blank lines kept', async (_, text) => {
    const { ran, after } = await setupOverConfig(home.dir, 'gemini', text, 'sk_live_29f3b5d7a9c1e3f5b7d9');
    expect(ran.code, ran.stderr).toBe(0);
    const leading = /^[ \t\r\n]*/.exec(text)?.[0] ?? '';
    const trailing = /[ \t\r\n]*$/.exec(text)?.[0] ?? '';
    expect(after.startsWith(leading) && after.endsWith(trailing)).toBe(true);
    expect(after.slice(leading.length, after.length - trailing.length)).not.toMatch(/[\r\n]/);
    expect(JSON.parse(after).mcpServers['engage-contact'].command).toBe('npx');
  });
});
