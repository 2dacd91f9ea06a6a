// Review 22a: a write whose outcome was unknown (the API did it, the connection broke) asked again
// meets the API's refusal of the repeat: a 404 for a delete (the record is gone), a 409 for a
// close (already closed). Found: "Not found (HTTP 404). contact.delete was not carried out;
// nothing was changed. Use contact.list to find valid ids.": true of this attempt, but it sends
// the model after another id and reads as if the contact was never deleted, while this server
// knows it sent exactly this write moments before. Now the refusal says so: the earlier send
// (and how it ended) may be what the API's answer reflects.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => sandbox?.close());

it.each([
  ['contact', 'contact.delete', () => ({ id: sandbox.tenant('A').contacts[0]!._id }), /Not found \(HTTP 404\)/],
  ['inbox', 'inbox.ticket.close', () => ({ ticketID: sandbox.tenant('A').tickets.find((ticket) => ticket.status === 'open')!.ticketID }), /HTTP 409/],
] as const)('review22a: %s %s refused on a repeat after an unknown outcome names the earlier send', async (domain, operationId, paramsOf, refusal) => {
  const server = await inProcess(DOMAINS[domain]!, sandbox, { env: { ENGAGE_CONFIRM: 'none' } });
  try {
    const params = paramsOf();
    sandbox.injectFault({ kind: 'reset-after', operationId });
    const first = await server.call(operationId, params);
    expect(structuredOf(first).outcome).toBe('unknown');
    const again = await server.call(operationId, params);
    expect(structuredOf(again).outcome).toBe('refused');
    expect(textOf(again)).toMatch(refusal);
    expect(textOf(again)).toMatch(
      new RegExp(
        `Exactly this ${operationId.replace(/\./g, '\\.')} was sent by this server at .*, and its outcome is unknown \\(it may have been carried out\\): the API's answer may reflect that earlier send`,
      ),
    );
    expect(textOf(again)).not.toMatch(/find valid ids/);
    expect(textOf(again)).toMatch(new RegExp(`This attempt of ${operationId.replace(/\./g, '\\.')} changed nothing\\.`));
  } finally {
    await server.close();
  }
});
