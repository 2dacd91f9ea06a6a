// Review 16: a 401 told the model "Create a new key in the tenant console … and set
// ENGAGE_API_KEY", as if it could, and not that retrying will not help; the 403 answer names the
// person and says so. Both now read alike: retrying will not help, tell the user, who creates the
// key and where it goes.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));

describe('a refused key is the person’s to replace, and the answer says so', () => {
  it.each(['v1', 'v2-modern'] as const)('%s: 401 says retrying will not help and to tell the user', async (kind) => {
    const server = await serve('contact.list', { kind, env: { ENGAGE_API_KEY: sandbox.keys.revoked } });
    const result = await server.call('contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'The API refused the key (HTTP 401): it is invalid, revoked or expired. Retrying will not help: tell the user, who can create a new key in the tenant console under API key settings and set ENGAGE_API_KEY.',
    );
  });
});
