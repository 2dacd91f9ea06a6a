// Remote mode: a settle with its audit line that Redis did not take is kept by the replica and made
// once Redis answers (SettleOwed: the call appends no line of its own). The replica keeps such debts
// for at most OWED_KEYS writes; past that, one was dropped silently while the call was still told the
// store owed it, and a retry without the line that succeeded dropped the line kept with the mark: no
// line at all. Past the bound, the call is told the plain failure now, and appends the line itself.
import { describe, expect, it } from 'vitest';
import { OWED_KEYS, RedisUnavailableError, type RedisClient } from '../packages/http/src/redis.js';
import { RedisGuardStore } from '../packages/http/src/redis-guard-store.js';
import type { AuditEntry } from '../shared/src/call/audit.js';
import { SettleOwed } from '../shared/src/call/guard-store.js';

const down: RedisClient = {
  command: async () => {
    throw new RedisUnavailableError('Redis is not connected (reconnecting)');
  },
  close: async () => undefined,
};
const line: AuditEntry = {
  time: new Date().toISOString(),
  key: 'fingerprint-0005',
  server: 'engage-mcp-http',
  operationId: 'contact.delete',
  paramsDigest: 'digest',
  params: {},
  confirmation: 'not needed',
  outcome: 'done',
};

describe('settles kept while Redis does not answer', () => {
  it('past the bound, the call is not told the store owes the line', async () => {
    const store = new RedisGuardStore(down, { stateSecret: new TextEncoder().encode('a-shared-state-secret-of-more-than-32-bytes') });
    try {
      for (let index = 0; index < OWED_KEYS; index++) await expect(store.settleWrite(`w${index}`, 'o', 'done', false, line)).rejects.toBeInstanceOf(SettleOwed);
      const past = await store.settleWrite('one-more', 'o', 'done', false, line).catch((error: unknown) => error);
      expect(past).toBeInstanceOf(Error);
      expect(past).not.toBeInstanceOf(SettleOwed);
    } finally {
      store.close();
    }
  });
});
