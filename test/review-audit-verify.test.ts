// Review findings on the audit record's chain (shared/src/call/audit.ts, file-guard-store.ts).
// What must hold:
// 1. verifyAuditLines answers a verdict for any text, naming the line: a hostile or damaged line
//    (`null`, say) is "line N: ...", never an exception (the CLI then prints a TypeError and exits 2
//    instead of naming the line and exiting 1).
// 2. The chain continues from the record itself: losing state.json (deleted to reset counters, or
//    replaced after it was corrupted, which makes every write fail until it is) must not restart the
//    chain at seq 1 in the middle of an intact file, which verify then reports as tampering
//    ("a line was removed or inserted") although no line was touched.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chainAuditLine, verifyAuditLines, type AuditEntry } from '../shared/src/call/audit.js';
import { FileGuardStore, readSecret } from '../shared/src/call/file-guard-store.js';

const root = mkdtempSync(join(tmpdir(), 'review-verify-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const entry: AuditEntry = {
  time: new Date(0).toISOString(),
  key: 'fingerprint',
  server: 'engage-mcp-inbox',
  operationId: 'inbox.ticket.reply',
  paramsDigest: 'd',
  params: {},
  confirmation: 'token',
  outcome: 'done',
};

describe('review: verify and the audit chain', () => {
  it('a line that is JSON null gets a verdict naming it, not an exception', () => {
    const secret = Buffer.alloc(32, 7);
    const first = chainAuditLine(secret, { seq: 0, mac: '' }, entry).line;
    let verdict: unknown;
    expect(() => {
      verdict = verifyAuditLines(secret, [first, 'null']);
    }).not.toThrow();
    expect(verdict).toMatchObject({ ok: false, line: 2 });
  });

  it('an intact record stays verifiable after state.json is lost', async () => {
    const dir = join(root, 'lost-state');
    const store = new FileGuardStore(dir);
    await store.appendAudit(entry);
    await store.appendAudit(entry);
    rmSync(join(dir, 'state.json'));
    await new FileGuardStore(dir).appendAudit(entry);
    const lines = readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(verifyAuditLines(readSecret(dir), lines)).toEqual({ ok: true, lines: 3 });
  });
});
