// Review 32, the audit record and a host that names itself with the key. The record keeps the
// host's name and version as the host gives them (clientInfo, at initialize in 2025, with each
// request in 2026-07-28: in remote mode the caller's choice), cleaned of hidden characters but not
// redacted: a host named with the API key in it put the key, whole, in the record (and in remote mode
// in the shared Redis and every export of it), which README says keeps only the key's fingerprint.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { FileGuardStore } from '../shared/src/call/file-guard-store.js';
import { DOMAINS, inProcess } from './helpers.js';

let sandbox: Sandbox;
let root: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  root = mkdtempSync(join(tmpdir(), 'review32-audit-client-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a host whose name holds the key', () => {
  it.each(['v1', 'v2-modern'] as const)('%s: the record keeps its name with the key redacted', async (kind) => {
    const dir = join(root, kind);
    const server = await inProcess(DOMAINS.inbox!, sandbox, {
      kind,
      clientName: `host ${sandbox.keys.full}`,
      env: { ENGAGE_CONFIRM: 'none' },
      server: { guardStore: () => new FileGuardStore(dir) },
    });
    try {
      await server.call('inbox.ticket.reply', { ticketID: 'TCK-1001', message: 'Halo' });
    } finally {
      await server.close();
    }
    const record = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
    expect(record).not.toContain(sandbox.keys.full);
    expect(JSON.parse(record.trimEnd()).client.name).toContain('[redacted]');
  });
});
