// A read that names no record (contact.list, billing.quota: no id, no params) answered with the
// API's own JSON 404 was told only "Not found (HTTP 404): route not found.": no next step, and
// "not found" read as a missing record the model might look for. Such a read cannot miss a
// record: either the API holds nothing of the kind for the tenant (no subscription, say), or its
// route is missing at that address (an old API version in ENGAGE_BASE_URL, say). It says both now;
// a read by id keeps "use X to find valid ids".
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

it('a list read answered 404 points at the address, not at ids', async () => {
  const server = await serve('contact.list');
  sandbox.injectFault({ kind: 'status', status: 404, operationId: 'contact.list' });
  const result = await server.call('contact.list');
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(
    /^Not found \(HTTP 404\).*contact\.list names no record \(it takes no id\), so no other params or ids will help: either the API holds nothing of this kind for the tenant/,
  );
  expect(textOf(result)).toMatch(/ENGAGE_BASE_URL \(its path included\) may be wrong: tell the user/);
});

it('a read by id answered 404 still sends the model to the list', async () => {
  const server = await serve('inbox.ticket.get');
  const result = await server.call('inbox.ticket.get', { ticketID: 'TCK-9999' });
  expect(textOf(result)).toMatch(/^Not found \(HTTP 404\): .*Use inbox\.ticket\.list to find valid ids\.$/);
  expect(textOf(result)).not.toMatch(/ENGAGE_BASE_URL/);
});
