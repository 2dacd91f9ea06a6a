// The product domain: the tenant's product catalogue. The spec shows no product fields, so the
// create and update bodies name the plausible ones and pass any others through unchanged; a
// confirmation shows every field sent, whole. Names and descriptions may come from third parties.
import { z } from 'zod';
import {
  brief,
  defineDomain,
  live,
  notShown,
  pathId,
  plain,
  quote,
  requiredText,
  withNames,
  type Fact,
  type Params,
  type PreviewReader,
} from '@engage-mcp/shared';

const PRODUCTS = '/api/product/v1/products';
/** Where a product record may carry its id (the spec shows no product fields). */
const ID_FIELDS = ['_id', 'productID', 'id'] as const;

async function productName(params: Params, read: PreviewReader): Promise<Fact> {
  return nameOf(params, await read(`${PRODUCTS}/${encodeURIComponent(String(params.productID))}`));
}

/** The id a record read for `params.productID` names, where it is another product's. */
function otherId(params: Params, product: unknown): string | number | undefined {
  return ID_FIELDS.map((field) => (product as Record<string, unknown> | null)?.[field]).find(
    (id): id is string | number => (typeof id === 'string' || typeof id === 'number') && String(id) !== String(params.productID),
  );
}

function nameOf(params: Params, product: unknown): Fact {
  if (product === undefined) return notShown('Product', undefined);
  // A record that names another id is not this product: never shown as the one this acts on.
  const other = otherId(params, product);
  if (other !== undefined) return `Product: the API answered with another record (${plain(other)}) for ${plain(params.productID)}: check it before agreeing.`;
  if (typeof product === 'object' && product !== null && 'name' in product)
    return withNames((name) => `Product: ${name((product as { name: unknown }).name)}.`);
  return `Product: ${brief(product, 200)}.`;
}

/** A record's field names as the preview lists them: names of plain characters only, at most MAX_FIELDS_LISTED (the record is the API's). */
const MAX_FIELDS_LISTED = 20;
function fieldsOf(record: Record<string, unknown>): string {
  const names = Object.keys(record).filter((key) => /^[A-Za-z0-9_.-]{1,64}$/.test(key));
  const more = Object.keys(record).length - Math.min(names.length, MAX_FIELDS_LISTED);
  if (names.length === 0) return 'not shown (none has a plain name)';
  return `${names.slice(0, MAX_FIELDS_LISTED).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/**
 * What an update changes, beside the product as it reads now: each field's value now (live: stock
 * moves with every sale), and the fields the record does not have. The body is not in the spec, so
 * a field the model guessed (available: false for "out of stock") went out as if it meant
 * something, and the person agreed to a change the record shows no sign of taking.
 */
function updateFacts(params: Params, product: unknown): Array<Fact | undefined> {
  // Another product's record (nameOf says so) holds nothing of this one's values or fields.
  if (typeof product !== 'object' || product === null || Array.isArray(product) || otherId(params, product) !== undefined) return [];
  const record = product as Record<string, unknown>;
  const changed = Object.keys(params).filter((key) => key !== 'productID');
  const held = changed.filter((key) => Object.hasOwn(record, key));
  const absent = changed.filter((key) => !Object.hasOwn(record, key));
  return [
    held.length === 0 ? undefined : live(`Now: ${held.map((key) => `${key} ${plain(record[key])}`).join(', ')}.`),
    absent.length === 0
      ? undefined
      : `Not a field of this product as the API shows it: ${absent.join(', ')}. The API does not say what it does with such a field (it may keep it, ignore it or refuse it); the product's own fields are ${fieldsOf(record)}.`,
  ];
}

/** The named fields as the confirmation shows them, whole; other fields are listed by the core. */
function describeFields(p: Params): string[] {
  return (['name', 'description', 'price'] as const).filter((key) => p[key] !== undefined).map((key) => `${key} ${quote(p[key])}`);
}

const productFields = {
  name: requiredText('product name', 200),
  description: z.string().max(10_000).optional().describe('text'),
  price: z.number().nonnegative().optional().describe('number'),
};

export const product = defineDomain('product', 'Products', [
  {
    id: 'product.list',
    method: 'GET',
    path: PRODUCTS,
    scope: 'product.read',
    risk: 'safe',
    summary: "The tenant's products.",
    params: z.strictObject({}),
    list: {},
    customerText: true,
  },
  {
    id: 'product.get',
    method: 'GET',
    path: `${PRODUCTS}/{productID}`,
    scope: 'product.read',
    risk: 'safe',
    summary: 'One product.',
    params: z.strictObject({ productID: pathId('product id (product.list)') }),
    customerText: true,
    findIdsWith: 'product.list',
  },
  {
    id: 'product.create',
    method: 'POST',
    path: PRODUCTS,
    scope: 'product.manage',
    risk: 'confirm',
    summary: 'Add a product.',
    params: z.looseObject(productFields),
    customerText: true,
    verifyWith: 'product.list',
    confirmation: { effect: (p) => `Add a product: ${describeFields(p).join(', ')}.` },
  },
  {
    id: 'product.update',
    method: 'PUT',
    path: `${PRODUCTS}/{productID}`,
    scope: 'product.manage',
    risk: 'confirm',
    summary: 'Change the given fields of a product.',
    params: z
      .looseObject({
        productID: pathId('product id'),
        name: productFields.name.optional(),
        description: productFields.description,
        price: productFields.price,
      })
      .refine((p) => Object.keys(p).some((key) => key !== 'productID'), { message: 'needs at least one field to change' }),
    customerText: true,
    findIdsWith: 'product.list',
    verifyWith: 'product.get',
    confirmation: {
      effect: (p) => {
        const changes = describeFields(p);
        return `Change product ${String(p.productID)}${changes.length > 0 ? `: set ${changes.join(', ')}` : ''}.`;
      },
      facts: async (p, read) => {
        const product = await read(`${PRODUCTS}/${encodeURIComponent(String(p.productID))}`);
        return [nameOf(p, product), ...updateFacts(p, product)];
      },
    },
  },
  {
    id: 'product.delete',
    method: 'DELETE',
    path: `${PRODUCTS}/{productID}`,
    scope: 'product.manage',
    risk: 'destructive',
    summary: 'Delete a product with its images.',
    params: z.strictObject({ productID: pathId('product id') }),
    // The answer is untyped (spec): it may be the deleted product, its text from third parties.
    customerText: true,
    findIdsWith: 'product.list',
    verifyWith: 'product.get',
    confirmation: {
      effect: (p) => `Delete product ${String(p.productID)} together with its images.`,
      irreversible: 'the product and its images are deleted for good.',
      facts: async (p, read) => [await productName(p, read)],
    },
  },
]);
