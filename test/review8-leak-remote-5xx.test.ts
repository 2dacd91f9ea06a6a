// review8: remote mode redacted a 5xx (or non-JSON 2xx) body whole before the logger cut it, so a
// 60 MB body held the event loop for seconds, every tenant waiting behind it (the review measured
// 5.5 s; tests never time). The body is now cut as the logger cuts before the request's key is
// redacted from it: the work is bounded whatever the body's size.
import { describe, expect, it } from 'vitest';
import { PRE_CUT } from '../shared/src/safe/log.js';
import { keyRedactor, type Redact } from '../shared/src/safe/redact.js';
import { bodyForLog } from '../shared/src/upstream/api-client.js';
import { HOSTILE_KEY } from './hostile-api.js';

describe("remote mode: a 5xx body for the log, redacted with the request's key", () => {
  it('redacts at most what the logger keeps, with the start of a form at the cut redacted', () => {
    const seen: Array<{ length: number; cutAtEnd?: boolean }> = [];
    const real = keyRedactor([HOSTILE_KEY]);
    const spy: Redact = (text, options) => {
      seen.push({ length: text.length, ...(options?.cutAtEnd ? { cutAtEnd: true } : {}) });
      return real(text, options);
    };
    const huge = `${'x'.repeat(PRE_CUT - 10)}${HOSTILE_KEY}${'y'.repeat(5_000_000)}`;
    const logged = bodyForLog(huge, spy);
    expect(seen).toEqual([{ length: PRE_CUT, cutAtEnd: true }]);
    expect(logged).not.toContain(HOSTILE_KEY.slice(0, 8));
    expect(logged.endsWith('[redacted]')).toBe(true);
  });

  it('a body within the cut is redacted whole', () => {
    const body = `error: ${HOSTILE_KEY} is not allowed`;
    expect(bodyForLog(body, keyRedactor([HOSTILE_KEY]))).toBe('error: [redacted] is not allowed');
  });
});
