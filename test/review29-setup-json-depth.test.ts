// Review 29, the setup command against hostile JSON configs (found by timing a differential
// fuzzer's inputs): the file is written back indented, each level one indent deeper, so its size
// grew with the square of its nesting: 2 KB of arrays nested 1,000 deep came back as a 4 MB config,
// 8 KB (4,000 deep) as 64 MB, in time growing as fast, where nothing refused it short of a stack
// overflow. Values nested more than 100 deep are refused now, as in Codex's TOML, the file left as
// it is, saying where. Since only our own entries are written anew (the rest of the file is kept
// byte for byte), the limit holds in them; values nested deep elsewhere are the person's, kept.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-depth-');

async function setupOver(text: string) {
  return setupOverConfig(home.dir, 'claude-desktop', text, 'sk_live_29c3e5a7b9d1f2a4c6e8');
}

const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const objects = (depth: number) => `${'{"x": '.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
const inOurEntry = (value: string) => `{\n  "mcpServers": { "engage-contact": { "deep": ${value} } }\n}\n`;
const outside = (value: string) => `{\n  "deep": ${value},\n  "mcpServers": { "other": { "deep": ${value} } }\n}\n`;
/** Where the value starts on line 2 of inOurEntry, counting from column 1. */
const VALUE_COLUMN = '  "mcpServers": { "engage-contact": { "deep": '.length + 1;

describe('values nested deep', () => {
  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])('%s 101 and 1,000 deep in our entry: refused, saying where, the file left byte for byte', async (_, nested) => {
    for (const depth of [101, 1000]) {
      const text = inOurEntry(nested(depth));
      const { path, ran, after } = await setupOver(text);
      expect(ran.code).toBe(1);
      const column = VALUE_COLUMN + (nested === arrays ? 100 : 600);
      expect(ran.stderr).toContain(`${path} nests its values more than 100 deep (line 2, column ${column}, in its "engage-contact" entry)`);
      expect(ran.stderr).toMatch(/nothing was changed/i);
      expect(after).toBe(text);
    }
  });

  it('100 deep in our entry: merged, the deep value kept', async () => {
    const { ran, after } = await setupOver(inOurEntry(arrays(100)));
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(after).mcpServers['engage-contact'].deep)).toBe(arrays(100));
  });

  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])("%s 1,000 deep outside our entries (the person's own): merged, kept byte for byte", async (_, nested) => {
    const text = outside(nested(1000));
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    // One insertion (our entry) and nothing else changed: what precedes and follows it is the file.
    const kept = [...text].findIndex((char, at) => after[at] !== char);
    expect(kept).toBeGreaterThan(0);
    expect(after.endsWith(text.slice(kept))).toBe(true);
    expect(after.slice(kept, after.length - (text.length - kept))).toMatch(/^, "engage-contact": ?\{/);
  });
});
