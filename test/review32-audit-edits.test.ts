// Review 32, the audit record as a hostile file. verify checked each line's mac over the line's
// parsed fields, not over its text: a line edited into another that parses the same verified as
// intact (a field given twice, `"outcome":"refused"` put before the line's own `"outcome":"done"`:
// JSON.parse keeps the last, a person reading the file or grep the first; blanks; an escape). And
// the fields were walked recursively to be hashed again: a line with a field nested 200,000 deep
// (its seq and prev left right) stopped verify with "Maximum call stack size exceeded" (exit 2),
// naming no line. The mac is now checked over the line's text as written. A copy whose line endings
// became CRLF still verifies. Built command (`npm run build` first).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../shared/src/call/audit.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';

const BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');
const root = mkdtempSync(join(tmpdir(), 'review32-audit-edits-'));
const stateDir = join(root, 'state');
let lines: string[];

const entry = (ticket: string): AuditEntry => ({
  time: '2026-11-29T08:00:00.000Z',
  key: 'AbCdEfGh12345678',
  server: 'engage-mcp-inbox',
  operationId: 'inbox.ticket.reply',
  paramsDigest: 'd',
  params: { ticketID: ticket, message: '<text, 12 chars>' },
  confirmation: 'token',
  outcome: 'done',
  apiStatus: 200,
});

beforeAll(async () => {
  const store = new FileGuardStore(stateDir);
  for (const ticket of ['TCK-1', 'TCK-2', 'TCK-3']) await store.appendAudit(entry(ticket));
  lines = readFileSync(join(stateDir, 'audit.jsonl'), 'utf8').trimEnd().split('\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `engage-mcp-audit verify <file>` of the record's lines, the second one changed by `edit`, against the store's secret and head. */
function verifyEdited(edit: (line: string) => string, ending = '\n'): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(root, 'edited.jsonl');
  writeFileSync(file, lines.map((line, index) => (index === 1 ? edit(line) : line)).join(ending) + ending);
  return new Promise((done) => {
    execFile(process.execPath, [BIN, 'verify', file, '--state-dir', stateDir], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
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
