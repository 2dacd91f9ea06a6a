// Review 16: a model that puts a tool argument inside params. An operation whose body passes
// unknown fields through (product.create and update, channel.whatsapp.send) sent it to the API as
// data and was carried out: an idempotencyKey there protected nothing (a retry writes twice), a
// quietHoursOverride there overrode nothing, and a confirmationToken became a product field. Now
// such a call is refused before anything is sent, and the answer says where the argument goes;
// an operation that refuses unknown fields says the same of limit, offset, fields and search.
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => (sandbox = started));
const none = { env: { ENGAGE_CONFIRM: 'none' } };

describe('a tool argument given inside params is refused, with where it goes', () => {
  it.each([
    ['product.create', { name: 'Kopi', idempotencyKey: 'k-1' }, 'idempotencyKey'],
    ['product.update', { productID: 'p1', price: 5, confirmationToken: 'ct_x' }, 'confirmationToken'],
    ['channel.whatsapp.send', { msisdn: '6281234567890', message: 'Halo', quietHoursOverride: true }, 'quietHoursOverride'],
    ['product.create', { params: { name: 'Gula' } }, 'params'],
  ] as const)('%s with %j: nothing is sent', async (operationId, params, argument) => {
    const server = await serve(operationId, none);
    const result = await server.call(operationId, params as Record<string, unknown>);
    expect(result.isError, textOf(result)).toBe(true);
    expect(structuredOf(result).outcome).toBe('refused');
    expect(textOf(result)).toContain(`params.${argument} is an argument of the tool, not a field of ${operationId}: give it beside operationId and params`);
    expect(textOf(result)).toMatch(/Nothing was sent\.$/);
    expect(sandbox.carriedOut()).toHaveLength(0);
  });

  it('a read with limit inside params is told limit goes beside params', async () => {
    const server = await serve('contact.list');
    const result = await server.call('contact.list', { limit: 5 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('params.limit is not a field of this operation (limit is an argument of the tool: give it beside operationId and params)');
  });
});
