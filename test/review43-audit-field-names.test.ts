// Review 43, the audit record and a hostile model's field names. product.create and .update pass
// fields the catalog does not know on to the API, and the record's params summary named every
// field: a model could put a customer's name and phone number into a field's name
// (`Budi.Santoso.0812-3456-7890`, any letters, digits, _ . - up to 64) and so into the record that
// promises no customer text. Given the operation's catalog fields, the summary now names those
// (and the path's) only, and counts the others. The params digest still covers them all.
//
// NOTE for the lead: guardrails.ts (outside this review's scope) must pass the catalog's names for
// the record to use this: summarizeParams(trace.params, pathFieldsOf(trace.op), Object.keys(trace.op.params.shape)).
import { describe, expect, it } from 'vitest';
import { product } from '../packages/product/src/operations.js';
import { MORE_FIELDS, OTHER_FIELDS, summarizeParams } from '../shared/src/call/audit.js';

const operation = (id: string) => {
  const found = product.operations.find((op) => op.id === id);
  if (!found) throw new Error(`no ${id}`);
  return found;
};
const catalogFields = (id: string) => Object.keys(operation(id).params.shape);

describe('the audit summary of a write whose fields the model named', () => {
  it("product.create: the catalog's fields are named, a field named after a customer is only counted", () => {
    const params = { name: 'Kopi Susu', price: 18000, 'Budi.Santoso.0812-3456-7890': 1, note_for_Siti_Rahma: true };
    const summary = summarizeParams(params, [], catalogFields('product.create'));
    expect(summary).toEqual({ name: '<text, 9 chars>', price: 18000, [OTHER_FIELDS]: '<2 fields the catalog does not name>' });
    expect(JSON.stringify(summary)).not.toMatch(/Budi|Siti|0812/);
  });

  it("product.update: the path's id stays first and named", () => {
    const params = { productID: 'PRD-1', price: 20000, 'Siti.Rahma': 'x' };
    expect(summarizeParams(params, ['productID'], catalogFields('product.update'))).toEqual({
      productID: 'PRD-1',
      price: 20000,
      [OTHER_FIELDS]: '<1 field the catalog does not name>',
    });
  });

  it('20,000 unknown fields: one count, no "(more)"', () => {
    const extra = Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`field_${index}`, index]));
    const summary = summarizeParams({ name: 'Kopi', price: 1, ...extra }, [], catalogFields('product.create'));
    expect(summary).toEqual({ name: '<text, 4 chars>', price: 1, [OTHER_FIELDS]: '<20000 fields the catalog does not name>' });
    expect(summary[MORE_FIELDS]).toBeUndefined();
  });

  it('without the catalog fields, the summary is what it was (names every field, 50 at most)', () => {
    expect(summarizeParams({ name: 'Kopi', Budi: 1 }, [])).toEqual({ name: '<text, 4 chars>', Budi: 1 });
  });
});
