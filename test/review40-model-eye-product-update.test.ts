// Review 40 (the model's eye). "Batik Tulis is out of stock: mark it": the update's body is not in
// the spec, so product.update passes fields through, and a model that guessed one ({available:
// false}) was shown "It also sends these fields, exactly as given: available = false" and nothing
// more: the person agreed to a change the product shows no sign of taking. Now the preview says
// which fields the product as read does not have, lists the ones it has, and shows what each field
// it does have holds now (stock 12), live, as a sale moves it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess } from './helpers.js';

describe('review40: the preview of product.update', () => {
  let sandbox: Sandbox;
  let server: InProcess;
  beforeAll(async () => {
    sandbox = await startSandbox();
    server = await inProcess(DOMAINS.product!, sandbox, { env: { ENGAGE_CONFIRM: 'all' } });
  });
  afterAll(async () => {
    await server?.close();
    await sandbox?.close();
  });
  const batik = () => sandbox.tenant('A').products.find((product) => product.name === 'Batik Tulis Parang')!;

  it('a field the product does not have is named, with the fields it has; nothing is sent', async () => {
    const preview = textOf((await server.call('product.update', { productID: batik()._id, available: false })) as CallToolResult);
    expect(preview).toContain(
      "- Not a field of this product as the API shows it: available. The API does not say what it does with such a field (it may keep it, ignore it or refuse it); the product's own fields are _id, name, description, price, currency, stock, images, createdAt.",
    );
    expect(preview).not.toContain('- Now:');
    expect(sandbox.carriedOut()).toEqual([]);
  });

  it('a field it has is shown as it is now, and a sale since does not undo the yes', async () => {
    const preview = await server.call('product.update', { productID: batik()._id, stock: 0 });
    expect(textOf(preview)).toContain(`- Now: stock ${batik().stock}.`);
    expect(textOf(preview)).not.toContain('Not a field');
    batik().stock = Number(batik().stock) - 1;
    const done = await server.call('product.update', { productID: batik()._id, stock: 0 }, { confirmationToken: structuredOf(preview).confirmationToken });
    expect(structuredOf(done).outcome, textOf(done)).toBe('done');
    expect(batik().stock).toBe(0);
  });
});
