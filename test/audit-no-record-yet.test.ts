// `engage-mcp-audit` on a state directory where no write has ended yet printed Node's bare
// "ENOENT: no such file or directory, open '…/audit.jsonl'" (exit 2), and a record of one line was
// "1 lines". Noticed by review32-newcomer. Now: no record yet is said as such (exit 0); a record
// the store counted lines of and that is gone is said missing (exit 1); one line is "1 line".
// Built command (`npm run build` first).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { type AuditRun, runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const root = mkdtempSync(join(tmpdir(), 'audit-no-record-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function audit(stateDir: string, ...args: string[]): Promise<AuditRun> {
  return runAudit(args, { env: { PATH: process.env.PATH ?? '', ENGAGE_STATE_DIR: stateDir } });
}

const oneWrite = (dir: string) => new FileGuardStore(dir).appendAudit(ticketReplyEntry('TCK-1'));

it('says there is no record yet where no write has ended, for verify and tail', async () => {
  const dir = mkdtempSync(join(root, 'empty-'));
  for (const command of ['verify', 'tail']) {
    const { code, stdout, stderr } = await audit(dir, command);
    expect(stdout).toContain('no audit record yet');
    expect(stderr).not.toContain('ENOENT');
    expect(code).toBe(0);
  }
});

it('counts one line as one, and says a record the store counted is missing once it is gone', async () => {
  const dir = mkdtempSync(join(root, 'one-'));
  await oneWrite(dir);
  const intact = await audit(dir, 'verify');
  expect(intact.stdout).toContain(': 1 line, the chain is intact.');
  rmSync(join(dir, 'audit.jsonl'));
  const gone = await audit(dir, 'verify');
  expect(gone.stdout).toContain('missing: the store recorded 1 line of it, and the file is gone');
  expect(gone.code).toBe(1);
});
