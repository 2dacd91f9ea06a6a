// Review 32, the audit record as a hostile file. verify checked each line's mac over the line's
// parsed fields, not over its text: a line edited into another that parses the same verified as
// intact (a field given twice, `"outcome":"refused"` put before the line's own `"outcome":"done"`:
// JSON.parse keeps the last, a person reading the file or grep the first; blanks; an escape). And
// the fields were walked recursively to be hashed again: a line with a field nested 200,000 deep
// (its seq and prev left right) stopped verify with "Maximum call stack size exceeded" (exit 2),
// naming no line. The mac is now checked over the line's text as written. A copy whose line endings
// became CRLF still verifies. Built command (`npm run build` first).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type AuditRun, runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const root = mkdtempSync(join(tmpdir(), 'review32-audit-edits-'));
const stateDir = join(root, 'state');
let lines: string[];

beforeAll(async () => {
  const store = new FileGuardStore(stateDir);
  for (const ticket of ['TCK-1', 'TCK-2', 'TCK-3']) await store.appendAudit(ticketReplyEntry(ticket, { apiStatus: 200 }));
  lines = readFileSync(join(stateDir, 'audit.jsonl'), 'utf8').trimEnd().split('\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `engage-mcp-audit verify <file>` of the record's lines, the second one changed by `edit`, against the store's secret and head. */
function verifyEdited(edit: (line: string) => string, ending = '\n'): Promise<AuditRun> {
  const file = join(root, 'edited.jsonl');
  writeFileSync(file, lines.map((line, index) => (index === 1 ? edit(line) : line)).join(ending) + ending);
  return runAudit(['verify', file, '--state-dir', stateDir]);
}

describe('verify and a line edited into one that parses the same', () => {
  it('the untouched copy verifies (the control)', async () => {
    const { code, stdout } = await verifyEdited((line) => line);
    expect(stdout).toContain('3 lines, the chain is intact');
    expect(code).toBe(0);
  });

  it.each([
    ['a field given twice, the false one first', (line: string) => line.replace(/^\{/, '{"outcome":"refused",')],
    ['a blank after a colon', (line: string) => line.replace('"outcome":"done"', '"outcome": "done"')],
    ['a letter written as an escape', (line: string) => line.replace('"outcome":"done"', '"outcome":"d\\u006fne"')],
  ])('%s: line 2 is named as changed', async (_, edit) => {
    expect(edit(lines[1] as string)).not.toBe(lines[1]);
    const { code, stdout } = await verifyEdited(edit);
    expect(stdout).toContain('line 2: its content was changed');
    expect(code).toBe(1);
  });

  it('a field nested 200,000 deep: line 2 is named, no stack overflow', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const { code, stdout, stderr } = await verifyEdited((line) => line.replace('"paramsDigest"', `"extra":${deep},"paramsDigest"`));
    expect(stderr).not.toContain('call stack');
    expect(stdout).toContain('line 2: its content was changed');
    expect(code).toBe(1);
  });

  it('a copy whose line endings became CRLF still verifies', async () => {
    const { code, stdout } = await verifyEdited((line) => line, '\r\n');
    expect(stdout).toContain('3 lines, the chain is intact');
    expect(code).toBe(0);
  });
});
