// Review 32, verify and the spelling of the record's path. state.json keeps where each record's
// chain ends under the path the servers were given: ENGAGE_AUDIT_LOG as set, so `${DIR}/audit.jsonl`
// with a DIR ending in a slash is kept as `…//audit.jsonl`. verify looked the head up by the path as
// it resolved the file the person named (`/…/audit.jsonl`): no head was found, and lines cut from the
// record's end went unnoticed ("2 lines, the chain is intact"). The head is now found under any
// spelling of the same path. Built command (`npm run build` first).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { runAudit, ticketReplyEntry } from './helpers/audit-command.js';

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
      await store.appendAudit(ticketReplyEntry(ticket, { params: { ticketID: ticket, message: '<text, 4 chars>' } }));
    const record = join(logs, 'audit.jsonl');
    const lines = readFileSync(record, 'utf8').trimEnd().split('\n');
    writeFileSync(record, `${lines.slice(0, 2).join('\n')}\n`);
    const { code, stdout } = await runAudit(['verify', record, '--state-dir', stateDir]);
    expect(stdout).toContain('line 3: missing: the store recorded 3 lines, the file ends after 2');
    expect(code).toBe(1);
  });
});
