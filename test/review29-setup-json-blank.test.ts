// Review 29, the setup command against hostile JSON configs (found by a differential fuzzer): a
// file holding only characters String.trim() removes but JSON does not take for whitespace (a
// no-break space, U+2028, an ideographic space) was taken for an empty file and replaced by our
// servers alone, losing what was in it. Only JSON's own whitespace counts as empty now; anything
// else is not JSON and is left as it is, as every other file JSON.parse cannot read.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-blank-');

async function setupOver(text: string) {
  return setupOverConfig(home.dir, 'gemini', text, 'sk_live_29b7d2c4e6f8a1b3c5d7');
}

describe('a file with nothing but blanks', () => {
  it.each([
    ['a no-break space', '\u00a0\n'],
    ['a line separator', '\u2028'],
    ['an ideographic space among newlines', '\n\u3000\n'],
  ])('%s: not JSON, so refused and left byte for byte', async (_, text) => {
    const { path, ran, after } = await setupOver(text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is not valid JSON`);
    expect(ran.stderr).toContain('left as it is');
    expect(after).toBe(text);
  });

  it("JSON's own whitespace (spaces, tabs, CR, LF) is an empty file: the servers are written into it", async () => {
    const { ran, after } = await setupOver(' \t\r\n');
    expect(ran.code, ran.stderr).toBe(0);
    expect(Object.keys(JSON.parse(after).mcpServers)).toEqual(['engage-contact']);
  });
});
