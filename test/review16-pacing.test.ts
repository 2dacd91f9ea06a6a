// Review 16: a call held back by this server's own pacing (the key's bucket read empty, the wait
// longer than ENGAGE_MAX_RETRY_WAIT_S) was said to have got "HTTP 429" from the API, and to have
// been "not carried out", though it was never sent. It now says it was not sent, and why.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a call the pacing held back is not said to have met a 429', () => {
  it('a write held back by the pacing: not sent, and no 429 that never came', async () => {
    const key = sandbox.createKey(['contact.read', 'contact.manage'], { rateLimit: 1, burst: 1 });
    const server = await serve('contact.create', { env: { ENGAGE_API_KEY: key, ENGAGE_CONFIRM: 'none', ENGAGE_MAX_RETRY_WAIT_S: '0' } });
    const first = await server.call('contact.list');
    expect(first.isError, textOf(first)).toBeFalsy();
    const before = sandbox.requests().length;
    const result = await server.call('contact.create', { name: 'Ani', msisdn: '6281234000001' });
    expect(sandbox.requests().length, 'nothing reached the API').toBe(before);
    expect(structuredOf(result).outcome).toBe('refused');
    expect(textOf(result)).not.toMatch(/HTTP 429/);
    expect(textOf(result)).toMatch(/held contact\.create back: it was not sent\. Try again in \d+ seconds/);
  });
});
