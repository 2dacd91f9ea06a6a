// A 429 with Retry-After: 1 was answered "Try again in 1 seconds.". It reads "1 second" now.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

it('a wait of one second is "1 second"', async () => {
  const server = await serve('contact.list', { env: { ENGAGE_MAX_RETRY_WAIT_S: '0' } });
  sandbox.injectFault({ kind: 'rate-limit', retryAfter: '1', operationId: 'contact.list' });
  const result = await server.call('contact.list');
  expect(textOf(result)).toMatch(/contact\.list was not carried out\. Try again in 1 second\.$/);
});
