// Review 32, the audit command and a record it cannot hold, or that is not a file. It read the
// whole record into one string: a record longer than V8's longest string (512 MB: years of writes,
// or a line of junk appended to it) could be neither verified nor tailed ("Cannot create a string
// longer than 0x1fffffe8 characters", exit 2). And a FIFO where the record is found by default held
// the command forever. The record is now read a chunk at a time (a line longer than any the servers
// write is named, not read on), and where it is found by default anything but a regular file is
// said, as the servers say it, and not read. Built command (`npm run build` first).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type AuditRun, runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const root = mkdtempSync(join(tmpdir(), 'review32-audit-huge-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let stateDir: string;
let record: string;

let made = 0;
beforeEach(async () => {
  stateDir = join(root, `state-${++made}`);
  const store = new FileGuardStore(stateDir);
  for (const ticket of ['TCK-1', 'TCK-2', 'TCK-3']) await store.appendAudit(ticketReplyEntry(ticket));
  record = join(stateDir, 'audit.jsonl');
});

function audit(args: string[]): Promise<AuditRun> {
  // A command held forever is stopped here (code SIGTERM), so the test says so rather than waits.
  return runAudit([...args, '--state-dir', stateDir], { timeout: 20_000 });
}

describe('a record longer than the longest string', () => {
  it('verify names the line of junk after the record; tail shows the last lines', { timeout: 90_000 }, async () => {
    // 600 MB of NUL bytes after the record's three lines, as a hole: no disk is used.
    truncateSync(record, statSync(record).size + 600 * 1024 * 1024);
    const verified = await audit(['verify']);
    expect(verified.stderr).not.toContain('Cannot create a string');
    expect(verified.stdout).toContain('line 4: longer than any line of the record (over 64 MiB), not read on');
    expect(verified.code).toBe(1);
    const tailed = await audit(['tail', '-n', '2']);
    expect(tailed.stderr).toBe('');
    expect(tailed.stdout).toContain('#3 2026-11-29T08:00:00.000Z inbox.ticket.reply: done');
    expect(tailed.stdout).toContain('(not a line of the record) \\u{0}');
    expect(tailed.code).toBe(0);
  });
});

describe('where the record is found by default, anything but a regular file', () => {
  it('a FIFO is said, not read (it held verify forever)', { timeout: 60_000 }, async () => {
    rmSync(record);
    execFileSync('mkfifo', [record]);
    const verified = await audit(['verify']);
    expect(verified.code).toBe(2);
    expect(verified.stderr).toContain(`${record} is not a regular file, so the servers did not write it`);
  });

  it('a symbolic link is said, not followed; named, the file it points to is read', async () => {
    const elsewhere = join(root, `elsewhere-${made}.jsonl`);
    writeFileSync(elsewhere, readFileSync(record));
    rmSync(record);
    symlinkSync(elsewhere, record);
    const found = await audit(['verify']);
    expect(found.code).toBe(2);
    expect(found.stderr).toContain(`${record} is a symbolic link, which the servers never write through`);
    const named = await audit(['verify', record]);
    expect(named.stdout).toContain('3 lines, the chain is intact');
    expect(named.code).toBe(0);
  });
});
