// Review finding: `engage-mcp-audit tail` writes the record's text to the terminal as it is.
// What must hold: tail is for a person at a terminal; a line of the record (a hostile or damaged
// file, or a host whose clientInfo name carries control characters, which the servers record
// unfiltered) must never put control characters (ESC sequences that retitle, rewrite or hide lines
// of the terminal) on its output. Needs `npm run build` first (it runs the built bin).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'review-tail-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('review: tail and control characters', () => {
  it('a record line with ESC sequences in its fields is shown without them', async () => {
    const file = join(dir, 'audit.jsonl');
    const esc = '\u001b]0;owned\u0007\u001b[2K\u001b[1A';
    writeFileSync(
      file,
      `${JSON.stringify({ seq: 1, time: 'x', operationId: `inbox.ticket.reply${esc}`, outcome: 'done', confirmation: 'token', server: 's', key: 'k', client: { name: `host${esc}` }, params: {} })}\n`,
    );
    const { stdout } = await run(process.execPath, [join('packages', 'audit', 'bin', 'engage-mcp-audit.js'), 'tail', file, '--state-dir', dir]);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the point of the test
    expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});
