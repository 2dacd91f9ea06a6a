// Review 36 (remote): a service without Redis keeps the guardrails' state in its memory
// (memory-guard-store.ts, bounded by review35). With a daily cap set (ENGAGE_CAP_MESSAGES_PER_DAY),
// every send counts against its key's counter for the day before it goes out, and a send the API
// refuses (401: a made-up key) gives its count back. The counter stayed, at 0, for 26 hours: one
// entry per made-up key that tried a send, nothing swept until then (it had not expired), so anyone
// sending with a new made-up key each time grew the one process for every tenant. A counter given
// back to nothing is now forgotten (a missing counter counts 0, so no cap reads differently).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client as ModernClient } from '@modelcontextprotocol/client';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { CATALOGS } from '../packages/http/src/catalogs.js';
import { startService, type Service } from '../packages/http/src/service.js';
import { MemoryGuardStore } from '../shared/src/call/guard-store.js';
import { modernClient } from './service-process.js';
import { structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
let service: Service;
const clients: ModernClient[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  service = await startService({
    env: { ENGAGE_BASE_URL: sandbox.baseUrl, ENGAGE_CONFIRM: 'none', ENGAGE_CAP_MESSAGES_PER_DAY: '3' },
    catalogs: CATALOGS,
    port: 0,
    writeLog: () => {},
  });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await service?.close();
  await sandbox?.close();
});

const SEND = { name: 'channel_action', arguments: { operationId: 'channel.whatsapp.send', params: { msisdn: '081234567890', message: 'hello' } } };

describe('a service without Redis, a daily cap, and sends with made-up keys', () => {
  it("keeps no counter for a key whose every send the API refused; a tenant's cap counts as before", { timeout: 120_000 }, async () => {
    const taken = vi.spyOn(MemoryGuardStore.prototype, 'take');
    try {
      const madeUp = 40;
      for (let at = 0; at < madeUp; at++) {
        const attacker = await modernClient(service.url, `made-up-key-${at}-0123456789abcdef`);
        clients.push(attacker);
        expect(textOf((await attacker.callTool(SEND)) as never)).toMatch(/HTTP 401/);
      }
      expect(taken).toHaveBeenCalledTimes(madeUp);
      const store = taken.mock.contexts[0] as MemoryGuardStore;
      expect(store.counters.size).toBe(0);
      // The tenant's sends count: three go out, the fourth is refused by the cap.
      const tenant = await modernClient(service.url, sandbox.keys.otherTenant);
      clients.push(tenant);
      for (let at = 0; at < 3; at++) {
        const done = (await tenant.callTool(SEND)) as never;
        expect(structuredOf(done).outcome, textOf(done)).toBe('done');
      }
      expect(store.counters.size).toBe(1);
      const capped = (await tenant.callTool(SEND)) as never;
      expect(structuredOf(capped).outcome, textOf(capped)).toBe('refused');
      expect(textOf(capped)).toMatch(/3/);
    } finally {
      taken.mockRestore();
    }
  });
});
