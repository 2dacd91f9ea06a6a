// review8: the write journal keeps only the LAST attempt of each exact write. A later identical
// attempt that the API refused (a 429 past ENGAGE_MAX_RETRY_WAIT_S: "not carried out") overwrites
// the record that the write was carried out. Afterwards (1) a token given before the first send is
// honoured and sends the same message again, and (2) the token that did send is, when replayed,
// described as "not carried out".
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess } from './helpers.js';

let sandbox: Sandbox;
let server: InProcess;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterEach(async () => {
  sandbox.clearFaults();
  await server?.close();
});
afterAll(async () => sandbox?.close());

const sendsOf = (message: string) =>
  sandbox.carriedOut().filter((entry) => entry.operationId === 'channel.whatsapp.send' && entry.params.message === message).length;
const tokenOf = (result: unknown) => structuredOf(result as never).confirmationToken as string;

async function sentThenRefused(message: string) {
  server = await inProcess(DOMAINS.channel!, sandbox, { env: { ENGAGE_MAX_RETRY_WAIT_S: '1' } });
  const params = { msisdn: '081234567890', message };
  const t1 = tokenOf(await server.call('channel.whatsapp.send', params));
  const t2 = tokenOf(await server.call('channel.whatsapp.send', params)); // a second preview, before anything was sent
  const first = await server.call('channel.whatsapp.send', params, { confirmationToken: t1 });
  expect(first.isError, textOf(first)).toBeFalsy();
  expect(sendsOf(message)).toBe(1);
  // The person knowingly says yes once more (the preview warns it was sent); the API answers 429 for longer than we wait.
  const warned = await server.call('channel.whatsapp.send', params);
  expect(textOf(warned)).toMatch(/already sent exactly this/);
  sandbox.injectFault({ kind: 'rate-limit', operationId: 'channel.whatsapp.send', retryAfter: '30' });
  const limited = await server.call('channel.whatsapp.send', params, { confirmationToken: tokenOf(warned) });
  expect(structuredOf(limited).outcome, textOf(limited)).toBe('refused');
  expect(sendsOf(message)).toBe(1);
  return { params, t1, t2 };
}

describe('review8: a refused repeat erases the journal record of a carried-out send', () => {
  it('a token given before the first send is still refused afterwards (sent since this yes)', async () => {
    const { params, t2 } = await sentThenRefused('Promo A');
    const stale = await server.call('channel.whatsapp.send', params, { confirmationToken: t2 });
    expect(sendsOf('Promo A'), textOf(stale)).toBe(1);
    expect(stale.isError).toBe(true);
  }, 20_000);

  it('the token that sent, replayed, is not described as "not carried out"', async () => {
    const { params, t1 } = await sentThenRefused('Promo B');
    const replay = await server.call('channel.whatsapp.send', params, { confirmationToken: t1 });
    expect(sendsOf('Promo B')).toBe(1);
    expect(textOf(replay)).not.toMatch(/not carried out/);
    expect(structuredOf(replay).outcome).not.toBe('refused');
  }, 20_000);

  it('a new preview still warns that exactly this was sent', async () => {
    const { params } = await sentThenRefused('Promo C');
    const preview = await server.call('channel.whatsapp.send', params);
    expect(textOf(preview)).toMatch(/already sent exactly this/);
  }, 20_000);
});
