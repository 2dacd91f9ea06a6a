// Two replicas on one Redis: a confirmationToken used on one replica and shown again on the other.
// The replica that spent it knows how its use ended (sent and carried out, or spent without
// sending); the other one only knew that it was spent, and answered "it may already have been
// carried out" either way: a send that never went out was reported as possibly made, and one that
// was carried out as unknown. Both replicas now answer what happened, from the shared store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { structuredOf, textOf } from './helpers.js';
import { startTwoReplicas, whatsappSend as send, whatsappSendsOf, type TwoReplicas } from './two-replicas.js';

let replicas: TwoReplicas;
let a: TwoReplicas['a'];
let b: TwoReplicas['b'];
const tokenFor = async (on: TwoReplicas['a'], params: Record<string, unknown>) =>
  structuredOf((await send(on, { params })) as never).confirmationToken as string;
const sendsOf = (message: string) => whatsappSendsOf(replicas.sandbox, message);

beforeAll(async () => {
  replicas = await startTwoReplicas('spent-token-truth');
  ({ a, b } = replicas);
}, 30_000);
afterAll(() => replicas?.stop());

describe('a spent token shown again on another replica is answered truly', () => {
  it('spent without sending on one replica (shown with other params): the other says nothing was carried out with it', async () => {
    const params = { msisdn: '081234567890', message: 'never sent' };
    const token = await tokenFor(a, params);
    const misused = await send(a, { params: { ...params, message: 'other words' }, confirmationToken: token });
    expect(structuredOf(misused as never).confirmationToken, textOf(misused as never)).toBeDefined(); // a new preview
    for (const replica of [a, b]) {
      const again = await send(replica, { params, confirmationToken: token });
      expect(again.isError).toBe(true);
      expect(structuredOf(again as never).outcome, textOf(again as never)).toBe('refused');
      expect(textOf(again as never)).toMatch(/nothing was carried out with it/);
    }
    expect(sendsOf(params.message) + sendsOf('other words')).toBe(0);
  });

  it('carried out on one replica: the other says when, and sends nothing', async () => {
    const params = { msisdn: '081234567890', message: 'sent once' };
    const token = await tokenFor(a, params);
    expect((await send(a, { params, confirmationToken: token })).isError).toBeFalsy();
    for (const replica of [a, b]) {
      const again = await send(replica, { params, confirmationToken: token });
      expect(again.isError).toBe(true);
      expect(structuredOf(again as never).outcome, textOf(again as never)).toBe('done');
      expect(textOf(again as never)).toMatch(/it was carried out at/);
    }
    expect(sendsOf(params.message)).toBe(1);
  });

  it('refused by the API on one replica: the other says nothing was carried out with it', async () => {
    const params = { msisdn: '081234567890', message: 'refused by the API' };
    const token = await tokenFor(a, params);
    replicas.sandbox.injectFault({ kind: 'status', status: 409, operationId: 'channel.whatsapp.send' });
    const refused = await send(a, { params, confirmationToken: token });
    expect(refused.isError, textOf(refused as never)).toBe(true);
    const again = await send(b, { params, confirmationToken: token });
    expect(structuredOf(again as never).outcome, textOf(again as never)).toBe('refused');
    expect(sendsOf(params.message)).toBe(0);
  });
});
