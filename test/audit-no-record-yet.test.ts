// `engage-mcp-audit` on a state directory where no write has ended yet printed Node's bare
// "ENOENT: no such file or directory, open '…/audit.jsonl'" (exit 2), and a record of one line was
// "1 lines". Noticed by review32-newcomer. Now: no record yet is said as such (exit 0); a record
// the store counted lines of and that is gone is said missing (exit 1); one line is "1 line".
// Built command (`npm run build` first).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';

const BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');
const root = mkdtempSync(join(tmpdir(), 'audit-no-record-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function audit(stateDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ENGAGE_STATE_DIR: stateDir } }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

const oneWrite = (dir: string) =>
  new FileGuardStore(dir).appendAudit({
    time: '2026-11-29T08:00:00.000Z',
    key: 'AbCdEfGh12345678',
    server: 'engage-mcp-contact',
    operationId: 'contact.create',
    paramsDigest: 'd',
    params: { name: '<text, 4 chars>' },
    confirmation: 'token',
    outcome: 'done',
  });

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
