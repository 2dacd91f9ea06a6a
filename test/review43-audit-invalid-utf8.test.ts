// Review 43, the audit record as a hostile file: bytes that are not UTF-8. The command decoded the
// record with replacement, so a byte that is no UTF-8 read as U+FFFD; a line that held that
// character (a host whose name came mis-decoded, kept in the record as it introduced itself) could
// have its three bytes replaced by any invalid one (0xFF) and still verify as intact: the file was
// changed and the chain said it was not. The servers write UTF-8 only: a line that is not is now
// named, as a change from that line on. Built command (`npm run build` first).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { runAudit, ticketReplyEntry } from './helpers/audit-command.js';

const root = mkdtempSync(join(tmpdir(), 'review43-audit-utf8-'));
const stateDir = join(root, 'state');
const REPLACEMENT = Buffer.from('\uFFFD', 'utf8');
let record: Buffer;

beforeAll(async () => {
  const store = new FileGuardStore(stateDir);
  await store.appendAudit(ticketReplyEntry('TCK-1'));
  await store.appendAudit(ticketReplyEntry('TCK-2', { client: { name: 'Desk\uFFFDHost', version: '1.0' } }));
  await store.appendAudit(ticketReplyEntry('TCK-3'));
  record = readFileSync(join(stateDir, 'audit.jsonl'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function verifyCopy(bytes: Buffer) {
  const file = join(root, 'copy.jsonl');
  writeFileSync(file, bytes);
  return runAudit(['verify', file, '--state-dir', stateDir]);
}

describe('verify and bytes that are not UTF-8', () => {
  it('the record as written verifies (the control)', async () => {
    const { code, stdout } = await verifyCopy(record);
    expect(stdout).toContain('3 lines, the chain is intact');
    expect(code).toBe(0);
  });

  it("U+FFFD's bytes replaced by 0xFF: line 2 is named", async () => {
    const at = record.indexOf(REPLACEMENT);
    expect(at).toBeGreaterThan(0);
    const edited = Buffer.concat([record.subarray(0, at), Buffer.from([0xff]), record.subarray(at + REPLACEMENT.length)]);
    const { code, stdout } = await verifyCopy(edited);
    expect(stdout).toContain('line 2: not UTF-8 text');
    expect(code).toBe(1);
  });

  it('tail still shows such a line, as one that is not of the record', async () => {
    const at = record.indexOf(REPLACEMENT);
    const file = join(root, 'tail.jsonl');
    writeFileSync(file, Buffer.concat([record.subarray(0, at), Buffer.from([0xff]), record.subarray(at + REPLACEMENT.length)]));
    const { code, stdout } = await runAudit(['tail', file]);
    expect(stdout).toContain('#1 ');
    expect(stdout).toContain('(not a line of the record)');
    expect(stdout).toContain('#3 ');
    expect(code).toBe(0);
  });
});
