// Review 29, the setup command against hostile JSON configs (found by timing a differential
// fuzzer's inputs): the file is written back indented, each level one indent deeper, so its size
// grew with the square of its nesting: 2 KB of arrays nested 1,000 deep came back as a 4 MB config,
// 8 KB (4,000 deep) as 64 MB, in time growing as fast, where nothing refused it short of a stack
// overflow. Values nested more than 100 deep under the top-level object are refused now, as in
// Codex's TOML, the file left as it is, saying where.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-depth-');

async function setupOver(text: string) {
  return setupOverConfig(home.dir, 'claude-desktop', text, 'sk_live_29c3e5a7b9d1f2a4c6e8');
}

const arrays = (depth: number) => `{\n  "deep": ${'['.repeat(depth)}${']'.repeat(depth)}\n}\n`;
const objects = (depth: number) => `{\n  "deep": ${'{"x": '.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}\n}\n`;

describe('values nested deep', () => {
  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])('%s 101 and 1,000 deep: refused, saying where, the file left byte for byte', async (_, nested) => {
    for (const depth of [101, 1000]) {
      const { path, ran, after } = await setupOver(nested(depth));
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(`${path} nests its values more than 100 deep (line 2, column ${11 + (nested === arrays ? 100 : 600)})`);
      expect(ran.stderr).toMatch(/nothing was changed/i);
      expect(after).toBe(nested(depth));
    }
  });

  it('100 deep: merged, the deep value kept', async () => {
    const { ran, after } = await setupOver(arrays(100));
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(after).deep)).toBe(`${'['.repeat(100)}${']'.repeat(100)}`);
  });
});
