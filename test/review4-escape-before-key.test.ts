// A `%` or `\` right before the key (or a fragment of it) made the redactor read the key's first
// hex digits as an escape's ("%a1" as one character), so what was left was too short to match:
// a 12-character key after "%" was shown whole, and a longer one lost its first 2 or 4 characters.
import { describe, expect, it } from 'vitest';
import { keyRedactor } from '../shared/src/safe/redact.js';

describe('a % or \\ before a form is not taken for an escape of its first characters', () => {
  it('a whole key', () => {
    const key = 'a1b2c3d4e5f6';
    const redact = keyRedactor([key]);
    expect(redact(`token=%${key} ok`)).toBe('token=%[redacted] ok');
    expect(redact(`token=\\x${key} ok`)).toBe('token=\\x[redacted] ok');
    expect(redact(`token=\\u${key} ok`)).toBe('token=\\u[redacted] ok');
    expect(redact(`ends %${key} ${'z'.repeat(15)}`, { cutAtEnd: true })).toBe('ends %[redacted] '); // a cut drops its last 15 characters
  });

  it('no character of a longer key, nor a fragment of MIN_RUN characters', () => {
    const key = '5f2c9e7a1b3d4f6a';
    const redact = keyRedactor([key]);
    expect(redact(`x %${key} y`)).toBe('x %[redacted] y');
    expect(redact(`x \\u${key} y`)).toBe('x \\u[redacted] y');
    const long = keyRedactor(['eng_live_0123456789abcdef0123']);
    expect(long('frag \\u0123456789abcdef ok')).toBe('frag \\u[redacted] ok');
    expect(long('frag %0123456789abcdef ok')).toBe('frag %[redacted] ok');
  });

  it('escapes that are the key are still decoded, and ordinary percentages are left alone', () => {
    const key = 'a1b2c3d4e5f6';
    const redact = keyRedactor([key]);
    const encoded = [...key].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('');
    expect(redact(`q=${encoded}&x=1`)).toBe('q=[redacted]&x=1');
    expect(redact('diskon 50%, 100% asli, \\n baris')).toBe('diskon 50%, 100% asli, \\n baris');
  });
});
