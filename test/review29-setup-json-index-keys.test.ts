// Review 29, the setup command against hostile JSON configs (found by a differential fuzzer): a
// JavaScript object lists keys that are array indices ("1", "2024") first, in numeric order, before
// every other key, so a config with such a key after another came back with its keys reordered,
// which the merge promises never to do. Such a file is now refused, left as it is, saying which key;
// one whose index keys already come first, in order, is merged as before. Since our entries are
// written into the text in place, only they come back through JSON.stringify: the rule holds in
// them, and index keys anywhere else are the person's, kept where they are.
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-index-');

async function setupOver(text: string) {
  return setupOverConfig(home.dir, 'cursor', text, 'sk_live_29a4c1e7b3d5f8a6c0e2');
}

describe('keys that are array indices', () => {
  it.each([
    ['after another key, in our entry', '{\n  "mcpServers": { "engage-contact": { "theme": "dark", "2024": { "note": "kept" } } }\n}\n', '"2024"'],
    ['out of numeric order, in our entry', '{\n  "mcpServers": { "engage-contact": { "10": true, "9": false } }\n}\n', '"9"'],
    ["inside our entry's env", '{\n  "mcpServers": { "engage-contact": { "env": { "B": "x", "1": "y" } } }\n}\n', '"1"'],
  ])('%s: refused, naming the key, the file left byte for byte', async (_, text, key) => {
    const { path, ran, after } = await setupOver(text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(path);
    expect(ran.stderr).toContain(key);
    expect(ran.stderr).toMatch(/nothing was changed/i);
    expect(after).toBe(text);
  });

  it('first and in numeric order, or not indices at all ("01", "-1", "4294967295"): merged, the order kept', async () => {
    const text = '{\n  "1": 1,\n  "2": 2,\n  "theme": "dark",\n  "01": 3,\n  "-1": 4,\n  "4294967295": 5,\n  "mcpServers": {}\n}\n';
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(after.startsWith('{\n  "1": 1,\n  "2": 2,\n  "theme": "dark",\n  "01": 3,\n  "-1": 4,\n  "4294967295": 5,\n  "mcpServers": {\n')).toBe(true);
  });

  it('outside our entries (after another key, out of order, in a server of the user): merged, kept where they are', async () => {
    const text =
      '{\n  "theme": "dark",\n  "2024": { "note": "kept" },\n  "10": true,\n  "9": false,\n  "mcpServers": {\n    "other": { "env": { "B": "x", "1": "y" } }\n  }\n}\n';
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(after.replace(/,\n {4}"engage-contact": \{\n[\s\S]*?\n {4}\}(?=\n {2}\})/, '')).toBe(text);
  });
});
