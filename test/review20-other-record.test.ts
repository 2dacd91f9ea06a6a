// Review 20: a look-up by id that answers with another record. Attacked: product.delete of p1,
// where the API's read of /products/p1 returns the record of p2 ("Harmless test product").
// Found: the statement named p2's product as the one deleted. Now a record that names another id
// is not shown as this one: the statement says the API answered with another record, and to check
// it before agreeing. (Campaigns, contacts and tickets are found in a list by their id: held.)
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DOMAINS, inProcess, structuredOf, textOf } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
});
afterAll(async () => api?.close());

it('review20: product.delete of p1, read back as p2: p2 is not named as the product deleted', async () => {
  api.respond(() => envelope({ _id: 'p2', name: 'Harmless test product', price: 1 }));
  const server = await inProcess(DOMAINS.product!, { baseUrl: api.baseUrl, keys: { full: `eng_live_${'a'.repeat(40)}` } as never });
  try {
    const result = await server.call('product.delete', { productID: 'p1' });
    const statement = structuredOf(result).preview as string;
    expect(statement, textOf(result)).not.toContain('Harmless test product');
    expect(statement).toContain('- Product: the API answered with another record (p2) for p1: check it before agreeing.');
  } finally {
    await server.close();
  }
});
