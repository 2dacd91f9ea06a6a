// Review 32, the audit record and a write with many fields. The operations that pass unknown
// fields on to the API (product.create and .update, channel.whatsapp.send) take any number of them,
// and the record's params summary listed every one, by name: a write of 4 MB of short fields made a
// line of about 4 MB. Remote mode keeps each key's newest 10,000 lines in the shared Redis, so one
// tenant's writes refused by a guardrail (nothing sent, a line each) could fill the Redis every
// replica and tenant needs. The summary now lists the first 50 fields (by name) and counts the
// rest; the params digest still covers them all. Since review43-telemetry, fields the catalog does
// not name are only counted (a field's name is the model's text: it may be a customer's name and number).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { verifyAuditLines } from '../shared/src/call/audit.js';
import { FileGuardStore, readSecret } from '../shared/src/call/file-guard-store.js';
import { DOMAINS, inProcess } from './helpers.js';

let sandbox: Sandbox;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'review32-audit-wide-'));
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the audit line of a write with many fields', () => {
  it('stays short, says how many fields it leaves out, and the record verifies', async () => {
    const server = await inProcess(DOMAINS.product!, sandbox, { env: { ENGAGE_CONFIRM: 'none' }, server: { guardStore: () => new FileGuardStore(dir) } });
    try {
      const extra = Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`field_${index}`, index]));
      await server.call('product.create', { name: 'Kopi Susu', price: 18000, ...extra });
    } finally {
      await server.close();
    }
    const lines = readFileSync(join(dir, 'audit.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    expect(line.length).toBeLessThan(8 * 1024);
    const { params, operationId } = JSON.parse(line) as { params: Record<string, unknown>; operationId: string };
    expect(operationId).toBe('product.create');
    expect(Object.keys(params).sort()).toEqual(['(other fields)', 'name', 'price']);
    expect(params.name).toBe('<text, 9 chars>');
    expect(params['(other fields)']).toBe('<20000 fields the catalog does not name>');
    expect(line).not.toContain('field_0');
    expect(verifyAuditLines(readSecret(dir), lines)).toEqual({ ok: true, lines: 1 });
  });
});
