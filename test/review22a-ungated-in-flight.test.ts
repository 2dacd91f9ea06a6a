// Review 22a: "A write is never abandoned once sent: if the host gives up on the call (its request
// timeout, a cancel), the request still runs to its answer … Asked again for the same write, it
// refuses while the first is still on its way" (README). Attacked: writes that need no yes (the
// default for confirm-level operations, every write with ENGAGE_CONFIRM=none), a host that gives
// up on a slow send and a model that asks again at once. Found: the claim stage checked the
// journal only for a confirmed write, so the same write still at the API was sent a second time.
// Now a write that needs no yes is refused the same way while the same write is on its way.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, countCarriedOut, inProcess, requestsAtApi, structuredOf, textOf, until } from './helpers.js';

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => sandbox?.close());

it.each([
  ['channel', 'channel.whatsapp.send', () => ({ msisdn: '6281299990004', message: 'Promo hari ini' })],
  ['product', 'product.delete', () => ({ productID: sandbox.tenant('A').products[0]!._id })],
  ['inbox', 'inbox.ticket.create', () => ({ msisdn: '6281299990003', channel: 'whatsapp' })],
] as const)('review22a: %s %s with no yes needed, asked again while the first is at the API: sent once', async (domain, operationId, paramsOf) => {
  const server = await inProcess(DOMAINS[domain]!, sandbox, { env: { ENGAGE_CONFIRM: 'none' } });
  try {
    const params = paramsOf();
    sandbox.injectFault({ kind: 'delay', delayMs: 1500, operationId });
    // The host gives up after 300 ms (its request timeout); the write runs on.
    const tool = `${domain}_action`;
    const first = await server.client.callTool({ name: tool, arguments: { operationId, params } }, undefined, { timeout: 300 }).then(
      () => 'answered',
      () => 'gave up',
    );
    expect(first).toBe('gave up');
    // Asked again while the first is at the API (held there 1.5 s): under load it may get there after the host gave up.
    await until('the first write at the API', () => requestsAtApi(sandbox, operationId) === 1);
    const again = await server.call(operationId, params);
    // Any second request was made before `again` answered; the first one's is counted once the API carried it out.
    await until('the first write carried out', () => countCarriedOut(sandbox, operationId) === 1);
    // Sent to the API once (a second delete would only meet a 404: still a second request).
    expect(
      sandbox.requests().filter((request) => request.operationId === operationId),
      textOf(again),
    ).toHaveLength(1);
    expect(countCarriedOut(sandbox, operationId)).toBe(1);
    expect(structuredOf(again).outcome).toBe('unknown');
    expect(textOf(again)).toMatch(new RegExp(`Exactly this ${operationId.replace(/\./g, '\\.')} is still being sent by this server`));
  } finally {
    await server.close();
  }
});
