// Review 29, the setup command against hostile JSON configs: the merge wrote the whole file anew
// with JSON.stringify, so the person's own text came back respelled though its values were kept:
// "caf\u00e9" as "café", "\/" as "/", an array they kept on one line spread over several, their
// servers re-indented. Our entries are now written into the text in place, and every byte of the
// person's outside them stays as it was; a second run changes nothing.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { HostId } from '../packages/setup/src/hosts.js';
import { homePerTest, setupOverConfig, setupWithKey } from './setup-run.js';

const home = homePerTest('engage-review29-bytes-');

const KEY = 'sk_live_29d4f6a8c0e2b4d6f8a0';

async function setupOver(host: HostId, text: string) {
  const { path, ran: first, after } = await setupOverConfig(home.dir, host, text, KEY);
  const second = await setupWithKey(home.dir, host, KEY);
  return { first, after, again: await readFile(path, 'utf8'), second };
}

const theirs = (container: string, eol: string) =>
  [
    '{',
    '\t"note": "caf\\u00e9 \\/ r\\u00E9sum\\u00e9",',
    `\t"${container}": {`,
    '\t\t"other": { "command": "node", "args": ["x.js", "--port", "8080"], "env": {"TOKEN": "\\u0041BC"} }',
    '\t},',
    '\t"list": [1, 2,   3]',
    '}',
    '',
  ].join(eol);

describe("the person's text outside our entries", () => {
  it.each([
    ['cursor', 'mcpServers', '\n'],
    ['claude-code', 'mcpServers', '\r\n'],
    ['vscode', 'servers', '\n'],
  ] as const)('%s: kept byte for byte, ours added after theirs; a second run changes nothing', async (host, container, eol) => {
    const text = theirs(container, eol);
    const { first, after, again, second } = await setupOver(host, text);
    expect(first.code, first.stderr).toBe(0);
    // Taking out what was added (our entry after theirs; VS Code's key input at the end) leaves the file as it was.
    const ours = new RegExp(`,${eol}\\t\\t"engage-contact": \\{${eol}[\\s\\S]*?${eol}\\t\\t\\}(?=${eol}\\t\\},)`);
    const input = new RegExp(`,${eol}\\t"inputs": \\[${eol}[\\s\\S]*?${eol}\\t\\](?=${eol}\\}${eol}$)`);
    expect(after).toMatch(ours);
    expect(after.replace(ours, '').replace(input, '')).toBe(text);
    expect(JSON.parse(after)[container]['engage-contact'].command).toBe('npx');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('nothing to change');
    expect(again).toBe(after);
  });
});
