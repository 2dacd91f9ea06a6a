// Review 22a: a 404 is the API saying "no such record", and the model is told to find valid ids.
// Attacked: an address whose 404 is not the API's (a proxy or web server in front of it answers
// an HTML page: the base URL's path is wrong, or the route is not there). Found: "Not found (HTTP
// 404). … Use contact.list to find valid ids.", for a list that takes no id as much as for a
// delete: the model hunts for ids that are right while every call fails the same way. Now a 404
// whose body is not JSON says the request reached no route of the API (the address may be wrong),
// and where that is fixed; the API's own 404 is answered as before.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => sandbox?.close());

it('review22a: a 404 page that is not the API\'s is not "find valid ids"', async () => {
  const server = await inProcess(DOMAINS.contact!, sandbox, { env: { ENGAGE_CONFIRM: 'none' } });
  try {
    const id = sandbox.tenant('A').contacts[0]!._id;
    sandbox.injectFault({ kind: 'html', status: 404, operationId: 'contact.delete' });
    const deleted = await server.call('contact.delete', { id });
    expect(structuredOf(deleted).outcome).toBe('refused');
    expect(textOf(deleted)).not.toMatch(/find valid ids/);
    expect(textOf(deleted)).toMatch(/HTTP 404 \(its body: an HTML page, not JSON\), not the API's answer: .*ENGAGE_BASE_URL/);
    expect(textOf(deleted)).toMatch(/contact\.delete was not carried out; nothing was changed/);

    sandbox.injectFault({ kind: 'html', status: 404, operationId: 'contact.list' });
    const listed = await server.call('contact.list');
    expect(textOf(listed)).toMatch(/HTTP 404 .*ENGAGE_BASE_URL/);

    // The API's own 404 (its JSON) is a missing record, as before.
    const missing = await server.call('contact.delete', { id: 'no-such-contact' });
    expect(textOf(missing)).toMatch(/^Not found \(HTTP 404\).*Use contact\.list to find valid ids\./);
  } finally {
    await server.close();
  }
});
