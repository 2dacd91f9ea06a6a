// Review 41 (calls): product.update's preview shows the product's current value of each field the
// update sends ('Now: stock 12.', review40) and names the fields it lacks. Where the API answers the
// product's read with another record (another id), the preview says so, and must not then show that
// record's values and fields as this product's.
import { describe, expect, it } from 'vitest';
import { textOf } from './helpers.js';
import { envelope, hostileApiPerFile } from './hostile-api.js';

const stand = hostileApiPerFile();

describe("review41: product.update when the API answers with another product's record", () => {
  it("shows neither that record's values nor its fields as this product's", async () => {
    const server = await stand.serve('product', { ENGAGE_CONFIRM: 'all' });
    stand.api.respond(() => envelope({ _id: 'prod-other', name: 'Kain Lain', stock: 99, price: 5 }));
    const preview = textOf(await server.call('product.update', { productID: 'prod-1', stock: 0, available: false }));
    expect(preview).toContain('the API answered with another record (prod-other) for prod-1');
    expect(preview).not.toContain('stock 99');
    expect(preview).not.toContain("the product's own fields are");
  });
});
