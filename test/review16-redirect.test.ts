// Review 16: a read answered with a redirect was told "Try again later", though a redirect is the
// address (ENGAGE_BASE_URL) pointing elsewhere and retrying changes nothing. It now says so.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a redirect names the address, not a retry', () => {
  it('a read answered with a redirect: check ENGAGE_BASE_URL, not "try again later"', async () => {
    const server = await serve('contact.list');
    sandbox.injectFault({ kind: 'redirect', operationId: 'contact.list', times: 5 });
    const result = await server.call('contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/redirect[\s\S]*ENGAGE_BASE_URL may point to an old or wrong address: tell the user \(retrying will not help/);
    expect(textOf(result)).not.toMatch(/Try again later/);
  });
});
