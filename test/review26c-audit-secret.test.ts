// Review 26c: the audit secret (audit.key) was written in place (created, then written, never
// synced). A power loss after the first write of a state directory can leave it empty (the file
// made, its bytes not yet on disk), and a process killed between creating and writing it leaves it
// empty too: from then on every write of every server was refused ("Internal error … before
// channel.whatsapp.send was sent … if it fails the same way, tell the user"), for good, with
// nothing the user was told to do. Another process reading it in that instant failed its write the
// same way. It now appears whole (written beside, synced, linked into place); one left empty by an
// earlier version, never used, is made again under the lock, unless the state shows lines were
// chained with a secret now lost (then refused, naming it and what to do).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AuditEntry, verifyAuditLines } from '../shared/src/call/audit.js';
import { FileGuardStore, readSecret } from '../shared/src/call/file-guard-store.js';
import { GuardStateError } from '../shared/src/call/guard-store.js';
import { callSend, launchChannel } from './helpers/stdio-channel.js';
import { structuredOf, textOf } from './helpers.js';
import { stateDirFixture } from './state-dir-fixture.js';

const { sandbox, stateDir, params, sends } = stateDirFixture('review26c-secret', '62812663');

describe('an audit secret left empty (a power loss or a kill as it was first written)', () => {
  it('through the built server: the write goes, once, and its audit line verifies with the secret made again', { timeout: 60_000 }, async () => {
    const dir = stateDir();
    writeFileSync(join(dir, 'audit.key'), '', { mode: 0o600 });
    const server = await launchChannel(sandbox(), dir);
    try {
      const before = sends();
      const sent = await callSend(server, { params: params(1), idempotencyKey: 'after-empty-secret' });
      expect(structuredOf(sent).outcome, textOf(sent)).toBe('done');
      expect(sends()).toBe(before + 1);
      const again = await callSend(server, { params: params(1), idempotencyKey: 'after-empty-secret' });
      expect(textOf(again)).toMatch(/nothing was sent again/);
      expect(sends()).toBe(before + 1);
    } finally {
      await server.close();
    }
    expect(readFileSync(join(dir, 'audit.key'), 'utf8').trim().length).toBeGreaterThanOrEqual(40);
    const lines = readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(verifyAuditLines(readSecret(dir), lines)).toEqual({ ok: true, lines: 2 });
  });

  it('when the state shows lines were chained with the secret it held: refused, naming it, and left as it is', async () => {
    const dir = stateDir();
    const store = new FileGuardStore(dir);
    const entry: AuditEntry = {
      time: new Date().toISOString(),
      key: 'fp',
      server: 'channel',
      operationId: 'channel.whatsapp.send',
      paramsDigest: 'd',
      params: {},
      confirmation: 'not needed',
      outcome: 'done',
    };
    await store.appendAudit(entry);
    writeFileSync(join(dir, 'audit.key'), '', { mode: 0o600 });
    const later = new FileGuardStore(dir);
    await expect(later.auditSecret()).rejects.toThrow(GuardStateError);
    await expect(later.auditSecret()).rejects.toThrow(/audit\.key is empty or cut short.*Restore it from a backup, or move it aside \(mv /);
    expect(readFileSync(join(dir, 'audit.key'), 'utf8')).toBe('');
  });
});
