// Remote mode's callers: each key's redactor is built once and kept (bounded), never shared
// between keys.
import { describe, expect, it } from 'vitest';
import { keyFingerprint } from '../shared/src/call/confirmations.js';
import { WriteJournal } from '../shared/src/call/journal.js';
import { KeyGuesses } from '../shared/src/call/key-guesses.js';
import { remoteCallers } from '../shared/src/mcp/server.js';

const KEY_A = 'eng_live_tenant_a_0123456789abcdef';
const KEY_B = 'eng_live_tenant_b_0123456789abcdef';

describe('remote callers', () => {
  it('a key that comes again gets the redactor built for it the first time', () => {
    const callerOf = remoteCallers(new WriteJournal(), new KeyGuesses());
    const first = callerOf(KEY_A);
    const again = callerOf(KEY_A);
    expect(again.redact).toBe(first.redact);
    expect(again.scrub).toBe(first.scrub);
    expect(again.credentials?.apiKey).toBe(KEY_A);
  });

  it('each key has its own redactor, which redacts that key', () => {
    const callerOf = remoteCallers(new WriteJournal(), new KeyGuesses());
    const a = callerOf(KEY_A);
    const b = callerOf(KEY_B);
    expect(b.redact).not.toBe(a.redact);
    expect(b.keyId).not.toBe(a.keyId);
    expect([a.keyId, b.keyId, callerOf(KEY_A).keyId]).toEqual([keyFingerprint(KEY_A), keyFingerprint(KEY_B), keyFingerprint(KEY_A)]);
    expect(a.redact(`x ${KEY_A} y`)).toBe('x eng_live_tenant_[redacted] y'); // its public prefix stands
    expect(b.redact(`x ${KEY_B} y`)).toBe('x eng_live_tenant_[redacted] y');
    expect(callerOf(KEY_A).redact(`x ${KEY_A}`)).toBe('x eng_live_tenant_[redacted]');
  });

  it('keeps only the most recently used keys', () => {
    const callerOf = remoteCallers(new WriteJournal(), new KeyGuesses(), {}, 2);
    const a = callerOf(KEY_A);
    callerOf(KEY_B);
    expect(callerOf(KEY_A).redact).toBe(a.redact); // A is now the most recent
    callerOf('eng_live_tenant_c_0123456789abcdef'); // B leaves
    expect(callerOf(KEY_A).redact).toBe(a.redact);
    const b = callerOf(KEY_B);
    expect(b.redact(`x ${KEY_B}`)).toBe('x eng_live_tenant_[redacted]');
  });
});
