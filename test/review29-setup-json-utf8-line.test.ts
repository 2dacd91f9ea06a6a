// Review 29, the setup command against hostile configs: a file that is not UTF-8 is refused with
// the line of its first byte in another encoding, found as where the bytes read leniently first
// hold U+FFFD. A file that holds U+FFFD itself (valid UTF-8: EF BF BD, a replacement character
// some editor left) before that byte was reported at the wrong line, the line of its own U+FFFD.
// The line is now that of the first byte that is not UTF-8.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { homePerTest, setupOverConfig } from './setup-run.js';

const home = homePerTest('engage-review29-utf8-');

describe('a config that is not UTF-8', () => {
  it.each([
    ['after a U+FFFD of its own', Buffer.concat([Buffer.from('{\n  "a": "\uFFFD",\n  "b": "caf'), Buffer.from([0xe9]), Buffer.from('"\n}\n')]), 3],
    ['a surrogate encoded as UTF-8 (CESU)', Buffer.concat([Buffer.from('{\n\n\n  "a": "'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"\n}\n')]), 4],
    ['a sequence cut short at the end', Buffer.concat([Buffer.from('{}\n\n'), Buffer.from([0xe2, 0x82])]), 3],
  ])('%s: refused, naming the line of the first such byte, the file left as it is', async (_, bytes, line) => {
    const { path, ran } = await setupOverConfig(home.dir, 'cursor', bytes, 'sk_live_29f6b8d0a2c4e6f8b0d2');
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(`${path} is not valid UTF-8 (a byte on line ${line} is`);
    expect(ran.stderr).toMatch(/nothing was changed/);
    expect((await readFile(path)).equals(bytes)).toBe(true);
  });
});
