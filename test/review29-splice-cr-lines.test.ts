// Review 29, setup's in-place JSON edit against unusual configs: a file whose lines end in a lone
// CR (classic Mac line endings; JSON takes CR as whitespace) was taken for a file on one line,
// since only LF was looked for: our entry went in squeezed onto one line among theirs, and into an
// empty object it went on LF lines, mixing line endings in the file. Such a file's lines are told
// now: our entry is laid out as theirs are, on lines ending in CR, and no LF is added.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review29-splice-cr-');

async function setupTwiceOver(text: string) {
  const { path, ran: first, after } = await setupOverConfig(home.dir, 'cursor', text, 'sk_live_29c1e3a5b7d9f1a3c5e7');
  const second = await setupWithKey(home.dir, 'cursor', 'sk_live_29c1e3a5b7d9f1a3c5e7');
  return { first, after, second, again: await readFile(path, 'utf8') };
}

describe('a JSON config whose lines end in CR alone', () => {
  it('our entry is added after theirs on CR lines, indented as theirs; their bytes kept; a second run changes nothing', async () => {
    const text = '{\r  "mcpServers": {\r    "other": { "command": "node" }\r  }\r}\r';
    const { first, after, second, again } = await setupTwiceOver(text);
    expect(first.code, first.stderr).toBe(0);
    expect(after).not.toContain('\n');
    const ours = /,\r {4}"engage-contact": \{\r {6}"command": "npx",\r[\s\S]*?\r {4}\}(?=\r {2}\}\r\}\r$)/;
    expect(after).toMatch(ours);
    expect(after.replace(ours, '')).toBe(text);
    expect(JSON.parse(after).mcpServers['engage-contact'].command).toBe('npx');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('nothing to change');
    expect(again).toBe(after);
  });

  it.each([
    ['a blank file', '\r\r'],
    ['an empty object', '{\r}\r'],
    ['an empty container', '{\r  "mcpServers": {}\r}\r'],
    ['no container yet', '{\r  "theme": "dark"\r}\r'],
  ])('%s: our entry on lines of its own, ending in CR; no LF added', async (_, text) => {
    const { first, after } = await setupTwiceOver(text);
    expect(first.code, first.stderr).toBe(0);
    expect(after).not.toContain('\n');
    expect(after).toMatch(/\r {4}"engage-contact": \{\r {6}"command": "npx",\r/);
    expect(JSON.parse(after).mcpServers['engage-contact'].command).toBe('npx');
  });
});
