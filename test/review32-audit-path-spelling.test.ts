// Review 32, verify and the spelling of the record's path. state.json keeps where each record's
// chain ends under the path the servers were given: ENGAGE_AUDIT_LOG as set, so `${DIR}/audit.jsonl`
// with a DIR ending in a slash is kept as `…//audit.jsonl`. verify looked the head up by the path as
// it resolved the file the person named (`/…/audit.jsonl`): no head was found, and lines cut from the
// record's end went unnoticed ("2 lines, the chain is intact"). The head is now found under any
// spelling of the same path. Built command (`npm run build` first).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';

const BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');
const root = mkdtempSync(join(tmpdir(), 'review32-audit-path-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('verify of a record whose path the servers were given spelled otherwise', () => {
  it('lines cut from its end are still reported', async () => {
    const stateDir = join(root, 'state');
    const logs = join(root, 'logs');
    mkdirSync(logs, { mode: 0o700 });
    // ENGAGE_AUDIT_LOG=${LOGS}/audit.jsonl with LOGS=/…/logs/
    const store = new FileGuardStore(stateDir, `${logs}//audit.jsonl`);
    for (const ticket of ['TCK-1', 'TCK-2', 'TCK-3'])
      await store.appendAudit({
        time: '2026-11-29T08:00:00.000Z',
        key: 'AbCdEfGh12345678',
        server: 'engage-mcp-inbox',
        operationId: 'inbox.ticket.reply',
        paramsDigest: 'd',
        params: { ticketID: ticket, message: '<text, 4 chars>' },
        confirmation: 'token',
        outcome: 'done',
      });
    const record = join(logs, 'audit.jsonl');
    const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
    writeFileSync(record, `${lines.slice(0, 2).join('\n')}\n`);
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((done) =>
      execFile(process.execPath, [BIN, 'verify', record, '--state-dir', stateDir], (error, stdout) =>
        done({ code: error ? Number(error.code ?? 1) : 0, stdout }),
      ),
    );
    expect(stdout).toContain('line 3: missing: the store recorded 3 lines, the file ends after 2');
    expect(code).toBe(1);
  });
});
