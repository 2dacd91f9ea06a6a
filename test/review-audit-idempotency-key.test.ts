// Review finding: the idempotencyKey argument reaches the audit record (and state.json) verbatim.
// What must hold: the audit record never holds the API key (only its fingerprint) nor free text
// a model or customer wrote; params are refused when they carry the key in any form, and the
// idempotencyKey argument, which is written to the audit record and the state file, must be held
// to the same rule (refused, or kept only as a keyed digest).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { DOMAINS, inProcess, textOf } from './helpers.js';

let sandbox: Sandbox;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'review-audit-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('review: the idempotencyKey argument and the audit record', () => {
  it('an idempotencyKey holding the API key never lands in the audit record or the state file', async () => {
    const server = await inProcess(DOMAINS.inbox!, sandbox, {
      env: { ENGAGE_CONFIRM: 'none' },
      server: { guardStore: () => new FileGuardStore(dir) },
    });
    try {
      const key = sandbox.keys.full;
      const result = await server.call('inbox.ticket.reply', { ticketID: 'TCK-1001', message: 'Halo' }, { idempotencyKey: key });
      // Whatever the answer, the key must not be on disk in the record of writes or the state.
      // A refused call writes neither file: a missing file holds no key.
      const readOrEmpty = (name: string) => {
        try {
          return readFileSync(join(dir, name), 'utf8');
        } catch {
          return '';
        }
      };
      const audit = readOrEmpty('audit.jsonl');
      const records = existsSync(join(dir, 'records')) ? readdirSync(join(dir, 'records')) : [];
      const state = [readOrEmpty('state.json'), ...records, ...records.map((file) => readOrEmpty(join('records', file)))].join('\n');
      expect(audit.includes(key), `audit.jsonl holds the API key; answer: ${textOf(result)}`).toBe(false);
      expect(state.includes(key), 'state.json or an idempotency record holds the API key').toBe(false);
    } finally {
      await server.close();
    }
  });
});
