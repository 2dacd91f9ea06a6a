// Setup refuses a JSON config only for what its own edit touches. It used to refuse the whole file
// for a number JSON.stringify would respell (1.50, 1e3, a big integer), a key given twice or an
// index-like key ("2024") anywhere in it, rules from when it wrote the whole file anew: a Cursor
// config whose other server had "timeout": 1.50 was refused. Only our own entries are written anew
// now, so those rules hold inside them alone (and only when they change); a key given twice on the
// way to them (the container, one of our names) is still refused, as which one the host reads is
// a guess. Everything outside our entries stays byte for byte.
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-narrow-json-');
const KEY = 'sk_live_43a9c1e7b3d5f8a6c0e2';

const setupOver = (text: string, host: HostId = 'cursor') => setupOverConfig(home.dir, host, text, KEY);

/** The file with our entry, added as the last of the container's, taken out again. */
const withoutOurs = (after: string) => after.replace(/,\n {4}"engage-contact": \{\n[\s\S]*?\n {4}\}(?=\n {2}\})/, '');

describe("the person's own values, which setup never writes", () => {
  it.each([
    ['a number spelled 1.50 in another server', '"other": { "command": "x", "timeout": 1.50 }'],
    ['a number spelled 1e3 in another server', '"other": { "command": "x", "timeout": 1e3 }'],
    ['a big integer in another server', '"other": { "command": "x", "retries": 12345678901234567890 }'],
    ['a key twice in another server', '"other": { "command": "x", "command": "y" }'],
    ['another server named twice', '"other": { "command": "x" },\n    "other": { "command": "y" }'],
    ['an index-like key in another server', '"other": { "env": { "B": "x", "1": "y" } }'],
    ['an index-like server name', '"other": { "command": "x" },\n    "2024": { "command": "y" }'],
  ])('%s: merged, every byte of theirs kept', async (_, servers) => {
    const text = `{\n  "theme": "dark",\n  "2024": { "price": 1.50, "k": 1, "k": 2 },\n  "mcpServers": {\n    ${servers}\n  }\n}\n`;
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(withoutOurs(after)).toBe(text);
    expect(after).toContain('"engage-contact": {');
  });
});

describe('what setup writes or depends on', () => {
  it.each([
    [
      'a number our entry would respell',
      '"engage-contact": { "command": "old", "timeout": 1.50 }',
      /the number 1\.50 \(line 4, column \d+, in its "engage-contact" entry/,
    ],
    [
      'a key twice in our entry',
      '"engage-contact": { "command": "old", "env": { "A": "1", "A": "2" } }',
      /the key "A" twice in one object \(line 4, column \d+, in its "engage-contact" entry/,
    ],
    [
      'an index-like key our entry would move',
      '"engage-contact": { "command": "old", "env": { "B": "x", "1": "y" } }',
      /the key "1" \(line 4, column \d+, in its "engage-contact" entry/,
    ],
    [
      'our server named twice',
      '"engage-contact": { "command": "a" },\n    "engage-contact": { "command": "b" }',
      /the key "engage-contact" twice in "mcpServers" \(line 4, column 5 and line 5, column 5\)/,
    ],
  ])('%s: refused, saying where, the file left byte for byte', async (_, servers, problem) => {
    const text = `{\n  "theme": "dark",\n  "mcpServers": {\n    ${servers}\n  }\n}\n`;
    const { path, ran, after } = await setupOver(text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(path);
    expect(ran.stderr).toMatch(problem);
    expect(ran.stderr).toContain('nothing was changed');
    expect(after).toBe(text);
  });

  it('the container given twice: refused, as the edit would go into the first and the host reads the last', async () => {
    const text = '{\n  "mcpServers": { "a": { "command": "x" } },\n  "mcpServers": { "b": { "command": "y" } }\n}\n';
    const { ran, after } = await setupOver(text);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/the key "mcpServers" twice in the file \(line 2, column 3 and line 3, column 3\)/);
    expect(after).toBe(text);
  });

  it("VS Code's inputs given twice: refused", async () => {
    const text = '{\n  "servers": {},\n  "inputs": [],\n  "inputs": []\n}\n';
    const { ran, after } = await setupOver(text, 'vscode');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/the key "inputs" twice in the file/);
    expect(after).toBe(text);
  });

  it("VS Code's inputs nested past 100 deep: refused, as setup reads them back whole", async () => {
    const text = `{\n  "servers": {},\n  "inputs": [{ "id": "other", "deep": ${'['.repeat(200)}${']'.repeat(200)} }]\n}\n`;
    const { ran, after } = await setupOver(text, 'vscode');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/nests its values more than 100 deep \(line 3, column \d+, in "inputs"\)/);
    expect(after).toBe(text);
  });

  it("a value of the person's nested 100,000 deep: merged, kept, no stack overflow", async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const text = `{\n  "deep": ${deep},\n  "mcpServers": {}\n}\n`;
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(after.startsWith(`{\n  "deep": ${deep},\n  "mcpServers": {\n    "engage-contact": {`)).toBe(true);
  });

  it('our entry holding 1.50 but otherwise as given: nothing to change, nothing refused', async () => {
    const entry = {
      command: 'npx',
      args: ['--prefix', home.dir, '-y', '@engage-mcp/contact'],
      env: { ENGAGE_API_KEY: KEY, ENGAGE_BASE_URL: 'https://api.example.com' },
    };
    const text = `{\n  "mcpServers": {\n    "engage-contact": ${JSON.stringify(entry).replace(/}$/, ', "timeout": 1.50}')}\n  }\n}\n`;
    const { ran, after } = await setupOver(text);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('nothing to change');
    expect(after).toBe(text);
  });
});
