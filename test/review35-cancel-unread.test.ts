// review35: a write that needs no yes, cancelled by its host while it was at the API (the person's
// stop, the host's request timeout), runs to its answer and is carried out: the API client never
// abandons it. But that answer never reaches the host, and the journal refuses the same write
// only while it is in flight: the host's repeat, once the first had ended, was
// sent again as new, its "Done" saying nothing of the first, and the customer had the message
// twice. Now the repeat is answered with the first call's answer, said to be that, and nothing is
// sent; a further identical call sends it again (the model was told, and may mean it).
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { countCarriedOut, requestsAtApi, structuredOf, textOf, toolOf, until, type InProcess } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
const SEND = 'channel.whatsapp.send';

/** The same call again until the first has ended at the server (until then it is refused as still being sent, and nothing is sent). */
async function repeatOnceEnded(server: InProcess, params: Record<string, unknown>) {
  for (;;) {
    const again = await server.call(SEND, params);
    if (!/still being sent/.test(textOf(again))) return again;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const kind of ['v1', 'v2-modern'] as const) {
  it(`a send cancelled while at the API is not sent again by its repeat, which gets its answer (${kind})`, async () => {
    const server = await serve(SEND, { kind, env: { ENGAGE_CONFIRM: 'none' } });
    const params = { msisdn: '081234567890', message: `Pesanan 4711 dikirim (${kind})` };
    sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 800 });
    const host = new AbortController();
    const first = server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, params } }, undefined, { signal: host.signal }).then(
      () => 'answered',
      () => 'cancelled',
    );
    await until('the send at the API', () => requestsAtApi(sandbox, SEND) === 1);
    host.abort();
    expect(await first).toBe('cancelled');
    await until('the send carried out', () => countCarriedOut(sandbox, SEND) === 1);

    const repeat = await repeatOnceEnded(server, params);
    expect(countCarriedOut(sandbox, SEND), textOf(repeat)).toBe(1);
    expect(requestsAtApi(sandbox, SEND)).toBe(1);
    expect(repeat.isError).toBeFalsy();
    expect(structuredOf(repeat).outcome).toBe('done');
    expect(textOf(repeat)).toMatch(
      /earlier call with this API key \(this host's, or another's using the same key\) that was cancelled .* carried out: that call's answer, which never reached you, is repeated below, and nothing was sent again/,
    );
    expect(textOf(repeat)).toMatch(/Done: channel\.whatsapp\.send was carried out\.\n.*"messageId"/s);

    // Told once: the same call after that is the model's (the user's) to mean, and is sent.
    const meant = await server.call(SEND, params);
    expect(textOf(meant)).not.toMatch(/never reached you/);
    expect(countCarriedOut(sandbox, SEND)).toBe(2);
  });
}

it.each(['v1', 'v2-modern'] as const)("a send the host's own request timeout gave up on is not sent again by its repeat (%s)", async (kind) => {
  const server = await serve(SEND, { kind, env: { ENGAGE_CONFIRM: 'none' } });
  const params = { msisdn: '081234567890', message: `Pesanan 4713 dikirim (${kind})` };
  // The client's timeout (the v1 client's is 60 s by default) ends before the API answers: the client sends the cancel.
  sandbox.injectFault({ kind: 'delay', operationId: SEND, delayMs: 1_500 });
  const first = await server.client.callTool({ name: toolOf(SEND), arguments: { operationId: SEND, params } }, undefined, { timeout: 500 }).then(
    () => 'answered',
    (error: unknown) => String(error),
  );
  expect(first).toMatch(/timed out/);
  await until('the send carried out', () => countCarriedOut(sandbox, SEND) === 1);
  const repeat = await repeatOnceEnded(server, params);
  expect(textOf(repeat)).toMatch(/never reached you/);
  expect(countCarriedOut(sandbox, SEND)).toBe(1);
});

it('the repeat of a send that was not cancelled is sent as before (its answer was read)', async () => {
  const server = await serve(SEND, { env: { ENGAGE_CONFIRM: 'none' } });
  const params = { msisdn: '081234567890', message: 'dua kali' };
  await server.call(SEND, params);
  const again = await server.call(SEND, params);
  expect(textOf(again)).not.toMatch(/never reached you/);
  expect(countCarriedOut(sandbox, SEND)).toBe(2);
});
