// Review 32, the audit secret readable by others. The chain proves nothing to whoever else could
// read audit.key: they could write lines that verify. The servers make it 0600, but use one that
// others may read (they refuse it only when others may write it), so a copy restored from a backup
// or chmod'ed 0644 went on being used, and verify said "the chain is intact" and nothing else. It
// now warns on stderr, naming the file and the chmod; the verdict is the chain's, as before.
// Built command (`npm run build` first). POSIX modes: not on Windows.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type AuditRun, runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const stateDir = mkdtempSync(join(tmpdir(), 'review32-audit-secret-'));
const secret = join(stateDir, 'audit.key');

beforeAll(async () => {
  await new FileGuardStore(stateDir).appendAudit(ticketReplyEntry('TCK-1'));
});
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

function verify(): Promise<AuditRun> {
  return runAudit(['verify', '--state-dir', stateDir]);
}

describe.skipIf(process.platform === 'win32')('verify and an audit secret others can read', () => {
  it('0644: the chain is intact, and verify says who else could have written it', async () => {
    chmodSync(secret, 0o644);
    const { code, stdout, stderr } = await verify();
    expect(stdout).toContain('1 line, the chain is intact');
    expect(code).toBe(0);
    expect(stderr).toContain(`${secret} can be read by other users (mode 0644): any of them could have written lines that verify. Run: chmod 600 ${secret}`);
  });

  it('0600 (as the servers make it): no warning', async () => {
    chmodSync(secret, 0o600);
    const { code, stderr } = await verify();
    expect(code).toBe(0);
    expect(stderr).toBe('');
  });
});
