// engage-mcp-audit where no home folder can be found (HOME unset and the user without a passwd
// entry): the README says `--state-dir DIR` names the state directory, but the command worked out
// its default (~/.local/state/engage-mcp) before reading its flags, and os.homedir() throws there
// (uv_os_homedir ENOENT): every run died with a stack trace, `--state-dir` given or not. Now the
// default is looked for only when nothing names the folder, and its absence is said in one line.
// As root the real thing is run (setpriv to a uid nobody has); elsewhere a preload makes homedir()
// throw as Node does. Needs `npm run build` first (it runs the built bin).
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homelessArgs } from './homeless.js';

const BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'engage-audit-no-home-'));
  chmodSync(dir, 0o755);
  writeFileSync(
    join(dir, 'audit.jsonl'),
    `${JSON.stringify({ seq: 1, time: '2026-11-29T08:00:00.000Z', operationId: 'contact.create', outcome: 'done', confirmation: 'token', server: 'engage-mcp-contact', key: 'k', params: {} })}\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The audit command with no HOME (nor XDG_STATE_HOME, ENGAGE_STATE_DIR, ENGAGE_AUDIT_LOG) and no home folder to be found. */
function homelessAudit(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const command = [...homelessArgs(BIN, dir, ['HOME', 'XDG_STATE_HOME', 'ENGAGE_STATE_DIR', 'ENGAGE_AUDIT_LOG']), ...args];
  return new Promise((done) => {
    execFile('env', command, { cwd: dir }, (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

describe('engage-mcp-audit with no home folder to be found', () => {
  it('tail reads the record in the folder --state-dir names', async () => {
    const { code, stdout, stderr } = await homelessAudit(['tail', '--state-dir', dir]);
    expect(stderr).not.toContain('uv_os_homedir');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('#1 2026-11-29T08:00:00.000Z contact.create: done');
  });

  it('without --state-dir or ENGAGE_STATE_DIR, says in one line what to give, with no stack trace', async () => {
    const { code, stdout, stderr } = await homelessAudit(['verify']);
    expect(code).toBe(2);
    expect(`${stdout}${stderr}`).toContain('give --state-dir DIR or set ENGAGE_STATE_DIR');
    expect(stderr).not.toContain('    at ');
  });
});
