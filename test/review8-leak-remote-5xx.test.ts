// review8: remote mode redacted a 5xx (or non-JSON 2xx) body whole before the logger cut it, so a
// 60 MB body held the event loop for seconds, every tenant waiting behind it (the review measured
// 5.5 s; tests never time). The body is now cut as the logger cuts before the request's key is
// redacted from it: the work is bounded whatever the body's size.
import { describe, expect, it } from 'vitest';
import { PRE_CUT } from '../shared/src/safe/log.js';
import { keyRedactor, type Redact } from '../shared/src/safe/redact.js';
import { bodyForLog } from '../shared/src/upstream/api-client.js';
import { HOSTILE_KEY } from './hostile-api.js';
import { keyScanner } from './leaks.js';

describe("remote mode: a 5xx body for the log, redacted with the request's key", () => {
  it('redacts at most what the logger keeps, and drops what the cut left of a form', () => {
    const seen: Array<{ length: number; cutAtEnd?: boolean }> = [];
    const real = keyRedactor([HOSTILE_KEY]);
    const spy: Redact = (text, options) => {
      seen.push({ length: text.length, ...(options?.cutAtEnd ? { cutAtEnd: true } : {}) });
      return real(text, options);
    };
    const huge = `${'x'.repeat(PRE_CUT - 30)}${HOSTILE_KEY}${'y'.repeat(5_000_000)}`;
    const logged = bodyForLog(huge, spy);
    expect(seen).toEqual([{ length: PRE_CUT, cutAtEnd: true }]);
    // The cut left 30 characters of the key; its last 15 go with the cut, whatever they are.
    expect(logged).toBe(`${'x'.repeat(PRE_CUT - 30)}${HOSTILE_KEY.slice(0, 15)}`);
    expect(keyScanner(HOSTILE_KEY).find(logged)).toBeUndefined();
  });

  it('a body within the cut is redacted whole', () => {
    const body = `error: ${HOSTILE_KEY} is not allowed`;
    expect(bodyForLog(body, keyRedactor([HOSTILE_KEY]))).toBe('error: eng_live_[redacted] is not allowed');
  });
});
