// Review 29: the servers refuse a relative ENGAGE_STATE_DIR or ENGAGE_AUDIT_LOG (a folder that
// moves with the working folder), and the README says engage-mcp-audit reads the state directory
// "as the servers do"; but the audit command took either relative to wherever it was run, so
// `tail` read an audit.jsonl planted under that folder as if it were the servers' record. It now
// refuses a relative one it would use, naming it; --state-dir and a named file stay free to be
// relative to where the person types them. Needs `npm run build` first (it runs the built bin).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = resolve('packages', 'audit', 'bin', 'engage-mcp-audit.js');
const LINE = `${JSON.stringify({ seq: 1, time: '2026-11-29T08:00:00.000Z', operationId: 'contact.create', outcome: 'done', confirmation: 'token', server: 'engage-mcp-contact', key: 'k', params: {} })}\n`;
let cwd: string;

beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'engage-audit-relative-'));
  mkdirSync(join(cwd, 'state'));
  writeFileSync(join(cwd, 'state', 'audit.jsonl'), LINE);
  writeFileSync(join(cwd, 'planted.jsonl'), LINE);
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function audit(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const { ENGAGE_STATE_DIR: _dir, ENGAGE_AUDIT_LOG: _log, ...rest } = process.env;
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env: { ...rest, ...env } }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('engage-mcp-audit and a relative state setting', () => {
  it.each([
    ['ENGAGE_STATE_DIR', 'state'],
    ['ENGAGE_AUDIT_LOG', 'planted.jsonl'],
  ])('%s=%s is refused, naming it, and nothing is read', async (name, value) => {
    const { code, stdout, stderr } = await audit(['tail'], { [name]: value });
    expect(code).toBe(2);
    expect(`${stdout}${stderr}`).toContain(`${name} must be an absolute path`);
    expect(stdout).not.toContain('contact.create');
  });

  it('--state-dir and a named file may still be relative to where the command is run', async () => {
    const byFlag = await audit(['tail', '--state-dir', 'state'], { ENGAGE_STATE_DIR: 'elsewhere' });
    expect(byFlag.code, byFlag.stderr).toBe(0);
    expect(byFlag.stdout).toContain('contact.create: done');
    const byFile = await audit(['tail', 'planted.jsonl'], { ENGAGE_AUDIT_LOG: 'elsewhere.jsonl' });
    expect(byFile.code, byFile.stderr).toBe(0);
    expect(byFile.stdout).toContain('contact.create: done');
  });
});
