// The confirmation budget (remote mode) notes who brought a value under the id the spent store
// knows it by; it had its own copy of the value's format, which would have silently stopped
// matching if the format changed here. The format now lives once, in confirmations.ts.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Confirmations, issuedIdOf, MemorySpentStore } from '../shared/src/call/confirmations.js';

describe('issuedIdOf', () => {
  it('names an issued value as the spent store and the journal do, and nothing else', () => {
    const confirmations = new Confirmations({ secret: randomBytes(32), store: new MemorySpentStore() });
    for (const kind of ['token', 'state'] as const) {
      const { value } = confirmations.issue(kind, 'fingerprint', 'contact.delete', { id: 'c1' });
      expect(issuedIdOf(kind, value)).toBe(confirmations.idOf(kind, value));
      expect(issuedIdOf(kind === 'token' ? 'state' : 'token', value)).toBeUndefined();
    }
    expect(issuedIdOf('token', 'not-a-token')).toBeUndefined();
    expect(issuedIdOf('token', 'ct_')).toBeUndefined();
  });
});
