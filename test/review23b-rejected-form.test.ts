// A write or read the API refused with 405 (or 406, 411, 415: the method, the body's type) was told
// "Correct the request before trying again.", sending the model to change params that were not at
// fault (the request's form is this server's); a 413 said the same where the remedy is to send
// less. Each now says what helps; a 400 or 422 keeps "Correct the request".
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

it.each([405, 415])('HTTP %i: not the params, tell the user', async (status) => {
  const server = await serve('contact.update');
  const id = sandbox.tenant('A').contacts[0]!._id;
  sandbox.injectFault({ kind: 'status', status, operationId: 'contact.update' });
  const result = await server.call('contact.update', { id, name: 'Budi S.' });
  expect(structuredOf(result)).toMatchObject({ outcome: 'refused' });
  expect(textOf(result)).toMatch(
    /contact\.update was not carried out; nothing was changed\. The request's form is this server's, not something in the params: changing them or retrying will not help; tell the user/,
  );
  expect(textOf(result)).not.toMatch(/Correct the request/);
});

it('HTTP 413: send less', async () => {
  const server = await serve('inbox.ticket.list');
  sandbox.injectFault({ kind: 'status', status: 413, operationId: 'inbox.ticket.list' });
  expect(textOf(await server.call('inbox.ticket.list'))).toMatch(/HTTP 413\).*The request is too large for the API: send less/);
});

it('HTTP 422 keeps "correct the request"', async () => {
  const server = await serve('contact.list');
  sandbox.injectFault({ kind: 'status', status: 422, operationId: 'contact.list' });
  expect(textOf(await server.call('contact.list'))).toMatch(/HTTP 422\).*Correct the request before trying again\.$/);
});
