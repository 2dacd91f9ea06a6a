// A field named __proto__ in params: JSON.parse makes it a field, but no copy of the params holds
// it (assigning it sets the copy's prototype), so an operation that passes unknown fields through
// (product.create) dropped it unseen: the write ran without it, and the answer said nothing of it.
// It is refused now, by name, and nothing is sent.
import { expect, it } from 'vitest';
import type { Sandbox } from '../packages/sandbox/src/index.js';
import { structuredOf, textOf } from './helpers.js';
import { sandboxPerTest } from './sandboxed.js';

let sandbox: Sandbox;
const serve = sandboxPerTest((started) => {
  sandbox = started;
});

it('refuses params.__proto__ of a pass-through write, by name, and sends nothing', async () => {
  const server = await serve('product.create');
  const params = JSON.parse('{"name":"Kopi","price":1000,"__proto__":{"description":"Free for everyone"}}');
  const result = await server.call('product.create', params);
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(/params has a field named "__proto__".*Nothing was sent/);
  expect(structuredOf(result)).toMatchObject({ operationId: 'product.create', outcome: 'refused' });
  expect(sandbox.carriedOut()).toEqual([]);
});

it('refuses it nested too (a WhatsApp template passes its fields through)', async () => {
  const server = await serve('channel.whatsapp.send');
  const params = JSON.parse('{"msisdn":"6281234567890","template":{"name":"order_update","language":"id","__proto__":{"components":[]}}}');
  const result = await server.call('channel.whatsapp.send', params);
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(/params\.template has a field named "__proto__"/);
  expect(sandbox.requests().filter((request) => request.method !== 'GET')).toEqual([]);
});
