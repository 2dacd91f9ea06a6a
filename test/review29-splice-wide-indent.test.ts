// Review 29, setup's in-place JSON edit against unusual configs: our entry is laid out with the
// file's own indent unit, but JSON.stringify takes at most 10 characters of indent, so in a file
// indented 12 (or 16) spaces a level, our entry's own levels came out 10 apart among the person's
// 12. Each level is now the file's unit, however wide.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-splice-indent-');

describe('a JSON config indented more than 10 spaces a level', () => {
  it.each([12, 16])('%i spaces: each level of our entry is that many spaces in', async (width) => {
    const unit = ' '.repeat(width);
    const text = `{\n${unit}"mcpServers": {\n${unit.repeat(2)}"other": {}\n${unit}}\n}\n`;
    const { ran, after } = await setupOverConfig(home.dir, 'cursor', text, 'sk_live_29a7c9e1b3d5f7a9c1e3');
    expect(ran.code, ran.stderr).toBe(0);
    expect(after).toContain(`,\n${unit.repeat(2)}"engage-contact": {\n${unit.repeat(3)}"command": "npx",\n${unit.repeat(3)}"args": [\n${unit.repeat(4)}"`);
    const indents = after.split('\n').map((line) => /^ */.exec(line)?.[0].length ?? 0);
    expect(indents.filter((indent) => indent % width !== 0)).toEqual([]);
  });
});
