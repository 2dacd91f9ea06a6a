// Review 35 (tenants): a service without Redis keeps the guardrails' state in its memory, for
// every tenant at once. Every write that reached an end added an audit line there, kept for the
// life of the process: a made-up key's writes (the API answers 401) cost anyone nothing, and each
// left ~450 bytes behind for good, so anyone could grow the one process until it ran out of memory
// for every tenant. Expired idempotency records and counters stayed too unless looked up again.
// Now only the latest MEMORY_AUDIT_LINES lines are kept (nothing reads this record), and expired
// records and counters are swept.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { MemoryGuardStore } from '../shared/src/call/guard-store.js';
import { MEMORY_AUDIT_LINES } from '../packages/http/src/memory-guard-store.js';
import { modernClient } from './service-process.js';
import { structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let service: Service;
const clients: ModernClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({ env: { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_CONFIRM: 'none' }, catalogs: CATALOGS, port: 0, writeLog: () => {} });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await service?.close();
  await sandbox?.close();
});

const SEND = { name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message: 'hello' } } };

describe('a service without Redis, and writes of keys the API refuses', () => {
  it(`keeps at most ${MEMORY_AUDIT_LINES} audit lines however many come`, { timeout: 120_000 }, async () => {
    const appended = vi.spyOn(MemoryGuardStore.prototype, 'appendAudit');
    const attackers = await Promise.all(Array.from({ length: 8 }, (_, at) => modernClient(service.url, `made-up-key-${at}-0123456789abcdef`)));
    clients.push(...attackers);
    const writes = MEMORY_AUDIT_LINES + 100;
    let answered = 0;
    await Promise.all(
      attackers.map(async (client, at) => {
        for (let each = at; each < writes; each += attackers.length) {
          const result = (await client.callTool(SEND)) as never;
          expect(textOf(result)).toMatch(/HTTP 401/);
          answered++;
        }
      }),
    );
    expect(answered).toBe(writes);
    expect(appended).toHaveBeenCalledTimes(writes);
    const store = appended.mock.contexts[0] as MemoryGuardStore;
    expect(store.auditLines.length).toBeLessThanOrEqual(MEMORY_AUDIT_LINES);
    // The latest line is the last write's, chained on: the record goes on after the oldest are dropped.
    expect(JSON.parse(store.auditLines.at(-1) as string)).toMatchObject({ seq: writes, apiStatus: 401 });
    // Another tenant's write is carried out as before.
    const tenant = await modernClient(service.url, sandbox.keys.otherTenant);
    clients.push(tenant);
    const done = (await tenant.callTool(SEND)) as never;
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    appended.mockRestore();
  });
});

describe("a service without Redis, and one tenant's idempotency records", () => {
  it('are forgotten once expired, when another tenant writes, though nobody looks them up again', { timeout: 60_000 }, async () => {
    const reserved = vi.spyOn(MemoryGuardStore.prototype, 'reserve');
    const tenantA = await modernClient(service.url, sandbox.keys.full);
    const tenantB = await modernClient(service.url, sandbox.keys.otherTenant);
    clients.push(tenantA, tenantB);
    for (let at = 0; at < 5; at++) {
      const done = (await tenantA.callTool({ ...SEND, arguments: { ...SEND.arguments, idempotencyKey: `a-${at}` } })) as never;
      expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    }
    const store = reserved.mock.contexts[0] as MemoryGuardStore;
    expect(store.records.size).toBe(5);
    // A day and a bit later (idempotency keys hold 24 hours), the other tenant writes.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 25 * 60 * 60 * 1000);
      const done = (await tenantB.callTool({ ...SEND, arguments: { ...SEND.arguments, idempotencyKey: 'b-1' } })) as never;
      expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    } finally {
      vi.useRealTimers();
      reserved.mockRestore();
    }
    expect(store.records.size).toBe(1);
  });
});
