// The file store refuses state it cannot trust (issue 21, findings 6 to 9): a state directory or
// audit file others may write, a symbolic link in a file's place, a state file that is not what
// the store wrote. Every write is then refused before anything is sent, with what to fix, and
// reads still work. The audit chain continues from the record itself when state.json is lost, and
// what the record keeps of the host (clientInfo) and what the audit command prints is cleaned.
import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { verifyAuditLines, type AuditEntry } from '../shared/src/call/audit.js';
import { FileGuardStore, readSecret } from '../shared/src/call/file-guard-store.js';
import { GuardStateError } from '../shared/src/call/guard-store.js';
import { DOMAINS, countCarriedOut, inProcess, structuredOf, textOf } from './helpers.js';

const run = promisify(execFile);
const AUDIT_BIN = join('packages', 'audit', 'bin', 'engage-mcp-audit.js');
let sandbox: Sandbox;
const root = mkdtempSync(join(tmpdir(), 'store-safety-'));
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

const entry: AuditEntry = {
  time: new Date(0).toISOString(),
  key: 'fingerprint',
  server: 'engage-mcp-channel',
  operationId: 'channel.whatsapp.send',
  paramsDigest: 'd',
  params: {},
  confirmation: 'not needed',
  outcome: 'done',
};

let made = 0;
/** A fresh state directory (0700, as the store makes it) under the test's root. */
function stateDir(): string {
  const dir = join(root, `dir-${++made}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** A channel server in this process on a file store in `dir`, sending without a question. */
function channelOn(dir: string, options: { auditLog?: string; clientName?: string } = {}) {
  const store = new FileGuardStore(dir, options.auditLog);
  return inProcess(DOMAINS.channel!, sandbox, {
    env: { ENGAGE_CONFIRM: 'none' },
    server: { guardStore: () => store },
    ...(options.clientName ? { clientName: options.clientName } : {}),
  });
}

const SEND = 'channel.whatsapp.send';
const params = (n: number) => ({ msisdn: `08127777300${n}`, message: `Halo ${n}` });

describe('a state directory others may write', () => {
  it('refuses every write before anything is sent, says what to fix, and leaves reads working', async () => {
    const dir = stateDir();
    chmodSync(dir, 0o777);
    const server = await channelOn(dir);
    try {
      const before = countCarriedOut(sandbox, SEND);
      const refused = await server.call(SEND, params(1));
      expect(refused.isError).toBe(true);
      expect(structuredOf(refused).outcome).toBe('refused');
      expect(textOf(refused)).toMatch(new RegExp(`state directory ${dir} can be written by others \\(mode 0777\\).*Run: chmod 700 ${dir}.*Nothing was sent`));
      expect(countCarriedOut(sandbox, SEND) - before).toBe(0);
      const read = await server.call('channel.list');
      expect(read.isError, textOf(read)).toBeFalsy();
      chmodSync(dir, 0o700);
      const sent = await server.call(SEND, params(2));
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
    } finally {
      await server.close();
    }
  });

  it('an ENGAGE_AUDIT_LOG file others may write, or a link in its place, refuses the write', async () => {
    const dir = stateDir();
    const loose = join(dir, 'loose.jsonl');
    writeFileSync(loose, '');
    chmodSync(loose, 0o666);
    await expect(new FileGuardStore(dir, loose).ready()).rejects.toThrow(/audit record .*loose\.jsonl can be written by others \(mode 0666\).*chmod 600/);
    const linked = join(dir, 'linked.jsonl');
    symlinkSync(join(root, 'elsewhere'), linked);
    await expect(new FileGuardStore(dir, linked).appendAudit(entry)).rejects.toThrow(GuardStateError);
    expect(() => readFileSync(join(root, 'elsewhere'))).toThrow(/ENOENT/);
  });

  it('a link planted at state.json or audit.key is refused, not followed', async () => {
    const dir = stateDir();
    writeFileSync(join(root, 'planted-state'), JSON.stringify({ counters: {}, records: {}, audit: {} }));
    symlinkSync(join(root, 'planted-state'), join(dir, 'state.json'));
    await expect(new FileGuardStore(dir).take('c', 1, 10, Date.now() + 60_000)).rejects.toThrow(/state\.json is a symbolic link/);
    const other = stateDir();
    writeFileSync(join(root, 'planted-key'), 'k'.repeat(43));
    symlinkSync(join(root, 'planted-key'), join(other, 'audit.key'));
    await expect(new FileGuardStore(other).appendAudit(entry)).rejects.toThrow(/audit\.key is a symbolic link/);
  });
});

describe('a damaged state file', () => {
  it.each([
    ['not JSON', '{"counters":'],
    ['a list', '[]'],
    ['a negative count', JSON.stringify({ counters: { c: { value: -3, expiresAt: Date.now() + 60_000 } } })],
    ['a record without its digest', JSON.stringify({ records: { k: { value: { operationId: SEND, at: 1 }, expiresAt: Date.now() + 60_000 } } })],
    ['an audit head that is text', JSON.stringify({ audit: { f: 'seq 3' } })],
  ])('(%s) refuses the write with where it is and what to do', async (_name, text) => {
    const dir = stateDir();
    writeFileSync(join(dir, 'state.json'), text, { mode: 0o600 });
    const server = await channelOn(dir);
    try {
      const before = countCarriedOut(sandbox, SEND);
      const refused = await server.call(SEND, params(3), { idempotencyKey: 'order-1' });
      expect(structuredOf(refused).outcome).toBe('refused');
      expect(textOf(refused)).toContain(`the guardrails' state file ${join(dir, 'state.json')} is damaged`);
      expect(textOf(refused)).toContain(`mv ${join(dir, 'state.json')}`);
      expect(countCarriedOut(sandbox, SEND) - before).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('the audit chain', () => {
  it('continues after a process died between its append and the state write, and still notices lines cut from the end', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    await store.appendAudit(entry);
    const stale = readFileSync(join(dir, 'state.json'), 'utf8');
    await store.appendAudit(entry);
    writeFileSync(join(dir, 'state.json'), stale); // the second append's state write never happened
    await store.appendAudit(entry);
    const file = join(dir, 'audit.jsonl');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(verifyAuditLines(readSecret(dir), lines)).toEqual({ ok: true, lines: 3 });

    writeFileSync(file, `${lines.slice(0, 2).join('\n')}\n`); // the last line cut away
    await store.appendAudit(entry);
    const after = readFileSync(file, 'utf8').trim().split('\n');
    expect(verifyAuditLines(readSecret(dir), after)).toMatchObject({ ok: false, line: 3 });
  });

  it('a line cut short by a crash is named by verify, and the next line starts on its own', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    await store.appendAudit(entry);
    appendFileSync(join(dir, 'audit.jsonl'), '{"seq":2,"ti');
    await store.appendAudit(entry);
    const lines = readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(verifyAuditLines(readSecret(dir), lines)).toMatchObject({ ok: false, line: 2, why: 'not a JSON line' });
  });

  it('verify names a line that is JSON but not an object', () => {
    for (const line of ['42', '[1]', '"text"']) expect(verifyAuditLines(Buffer.alloc(32), [line])).toEqual({ ok: false, line: 1, why: 'not a JSON object' });
  });
});

describe('what the record keeps of the host, and what the audit command prints', () => {
  it("the host's clientInfo name is recorded without control characters", async () => {
    const dir = stateDir();
    const server = await channelOn(dir, { clientName: 'host\u001b]0;owned\u0007\u001b[2K' });
    try {
      const sent = await server.call(SEND, params(4));
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
    } finally {
      await server.close();
    }
    const line = JSON.parse(readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim()) as { client: { name: string } };
    expect(line.client.name).toBe('host]0;owned[2K');
  });

  it('verify with a damaged state.json still checks the lines and says what it could not check', async () => {
    const dir = stateDir();
    await new FileGuardStore(dir).appendAudit(entry);
    writeFileSync(join(dir, 'state.json'), '{"counters":');
    const { stdout, stderr } = await run(process.execPath, [AUDIT_BIN, 'verify', '--state-dir', dir], { env: { PATH: process.env.PATH ?? '' } });
    expect(stdout).toMatch(/: 1 line, the chain is intact\./);
    expect(stderr).toMatch(/is damaged \(it is not JSON\).*lines cut from the record's end cannot be noticed/);
  });
});
