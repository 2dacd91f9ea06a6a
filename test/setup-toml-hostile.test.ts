// A config.toml is the person's text, and may be anything: what the setup's TOML reader cannot
// read is refused as a ConfigRefused that says why and leaves the file as it is, never an
// exception of JavaScript's own (a RangeError) that reads as a crash of the setup.
import { describe, expect, it } from 'vitest';
import { ConfigRefused } from '../packages/setup/src/config-error.js';
import { mergeTomlConfig } from '../packages/setup/src/toml-config.js';

const entries = { 'engage-contact': { command: 'npx', args: ['-y', '@engage-mcp/contact'], env: { ENGAGE_BASE_URL: 'https://a.example' } } };
const merge = (existing: string) => mergeTomlConfig(existing, entries, 'config.toml');

describe('an escape that is not a Unicode scalar value', () => {
  it.each([
    ['past U+10FFFF', 'model = "\\U00110000"\n'],
    ['far past it', 'model = "\\UFFFFFFFF"\n'],
    ['a high surrogate', 'model = "\\uD800"\n'],
    ['a low surrogate', '[mcp_servers."\\uDFFF"]\n'],
  ])('%s is refused, saying which escape', (_, existing) => {
    expect(() => merge(existing)).toThrow(ConfigRefused);
    expect(() => merge(existing)).toThrow(/line 1: .*escape/);
  });

  it('the last scalar values either side of the surrogates, and U+10FFFF, are read', () => {
    const existing = 'a = "\\uD7FF\\uE000\\U0010FFFF"\n';
    expect(merge(existing).startsWith(existing)).toBe(true);
  });
});

describe('arrays and inline tables nested deep', () => {
  const arrays = (depth: number) => `x = ${'['.repeat(depth)}${']'.repeat(depth)}\n`;
  const tables = (depth: number) => `x = ${'{ x = '.repeat(depth)}true${' }'.repeat(depth)}\n`;
  const mixed = (depth: number) => {
    const pairs = Math.floor(depth / 2);
    return `x = ${'[{ x = '.repeat(pairs)}${depth % 2 === 1 ? '[1]' : '1'}${' }]'.repeat(pairs)}\n`;
  };

  it.each([
    ['arrays', arrays],
    ['inline tables', tables],
    ['both, in turn', mixed],
  ])('%s: 100 deep are read, 101 and 20,000 deep refused (not a stack overflow)', (_, nested) => {
    expect(merge(nested(100)).startsWith(nested(100))).toBe(true);
    for (const depth of [101, 20_000]) {
      expect(() => merge(nested(depth))).toThrow(ConfigRefused);
      expect(() => merge(nested(depth))).toThrow(/line 1: .*nested more than 100 deep/);
    }
  });
});
