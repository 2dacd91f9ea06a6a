// Review finding: the file store trusts whatever it finds at ENGAGE_STATE_DIR / ENGAGE_AUDIT_LOG.
// What must hold (README, "Where the state lives": "all readable by you only (0600, the directory
// 0700)"): a state directory that already exists with looser permissions is tightened or refused,
// never used as it is; and the audit record is never appended through a symlink planted at its
// path (someone able to write into the directory, e.g. a shared /tmp state dir, would otherwise make
// every server append to a file of their choosing: ~/.bashrc, a file they can read, ...).
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import type { AuditEntry } from '../shared/src/call/audit.js';

const root = mkdtempSync(join(tmpdir(), 'review-statedir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const entry: AuditEntry = {
  time: new Date(0).toISOString(),
  key: 'fingerprint',
  server: 'engage-mcp-inbox',
  operationId: 'inbox.ticket.reply',
  paramsDigest: 'd',
  params: {},
  confirmation: 'not needed',
  outcome: 'done',
};

describe('review: the state directory as the store finds it', () => {
  it('a pre-existing world-writable state directory is not used as it is (0700 as the README says, or refused)', async () => {
    const dir = join(root, 'loose');
    mkdirSync(dir);
    chmodSync(dir, 0o777); // made by someone else, or by a umask-022 mkdir
    const store = new FileGuardStore(dir);
    let refused = false;
    try {
      await store.take('messages:k:2026-03-01', 1, 10, Date.now() + 60_000);
      await store.appendAudit(entry);
    } catch {
      refused = true;
    }
    if (!refused) expect((statSync(dir).mode & 0o777).toString(8), 'the state directory keeps mode 0777').toBe('700');
  });

  it('the audit record is never appended through a symlink planted at its path', async () => {
    const dir = join(root, 'planted');
    mkdirSync(dir, { mode: 0o700 });
    const victim = join(root, 'victim-bashrc');
    writeFileSync(victim, '# my shell settings\n');
    symlinkSync(victim, join(dir, 'audit.jsonl'));
    expect(lstatSync(join(dir, 'audit.jsonl')).isSymbolicLink()).toBe(true);
    const store = new FileGuardStore(dir);
    await store.appendAudit(entry).catch(() => undefined);
    expect(readFileSync(victim, 'utf8'), 'the audit line was appended to the symlink target').toBe('# my shell settings\n');
  });
});
