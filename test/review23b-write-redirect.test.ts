// A write answered with a redirect was told only that its outcome is unknown and to "check with
// contact.list before trying again": the read that checks it is redirected as well, and the model
// never heard that the address (ENGAGE_BASE_URL) is what to fix, as a read's redirect says. It
// says both now; the outcome stays unknown (a redirect may come after the work was done).
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

it('a write answered with a redirect: outcome unknown, and ENGAGE_BASE_URL is for the user to check', async () => {
  const server = await serve('contact.update');
  const id = sandbox.tenant('A').contacts[0]!._id;
  sandbox.injectFault({ kind: 'redirect', operationId: 'contact.update' });
  const result = await server.call('contact.update', { id, name: 'Budi S.' });
  expect(result.isError).toBe(true);
  expect(structuredOf(result)).toMatchObject({ operationId: 'contact.update', outcome: 'unknown' });
  expect(textOf(result)).toMatch(/The outcome is unknown: contact\.update may have been carried out/);
  expect(textOf(result)).toMatch(/ENGAGE_BASE_URL may point to an old or wrong address: tell the user \(retrying will not help while it redirects\)/);
});
