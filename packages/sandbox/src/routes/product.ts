// Products: list, read, create, update, delete. Each product's image files are kept apart
// (tenant.images), so deleting a product reports how many images went with it.
import { objectId, type TenantState } from '../data.js';
import { bad } from '../failure.js';
import { str } from './input.js';
import { find, now, route, type HandlerContext } from './route.js';

/** The body, checked; fields the spec does not name pass through unchecked. */
function productInput(body: Record<string, unknown>, required: boolean) {
  const name = str(body, 'name', required, 200);
  if (body.price !== undefined && (typeof body.price !== 'number' || body.price < 0)) throw bad('price must be a non-negative number');
  if (body.stock !== undefined && (typeof body.stock !== 'number' || !Number.isInteger(body.stock) || body.stock < 0))
    throw bad('stock must be a whole number');
  if (body.description !== undefined && typeof body.description !== 'string') throw bad('description must be a string');
  // The image files a delete takes with it (tenant.images): a list of addresses, kept in step with the record.
  if (body.images !== undefined && !(Array.isArray(body.images) && body.images.every((image) => typeof image === 'string')))
    throw bad('images must be a list of image addresses');
  return { ...body, ...(name !== undefined ? { name } : {}) };
}

function createProduct({ tenant, body }: HandlerContext) {
  const input = productInput(body, true);
  const product = {
    description: '',
    price: 0,
    currency: 'IDR',
    stock: 0,
    images: [] as string[],
    ...input,
    _id: objectId(Math.random),
    name: input.name as string,
    createdAt: now(),
  };
  tenant.products.push(product as TenantState['products'][number]);
  tenant.images.set(product._id, [...product.images]);
  return product;
}

/** Its _id and createdAt stay as they are, whatever the body says. */
function updateProduct({ tenant, params, body }: HandlerContext) {
  const product = find(tenant.products, '_id', params.productID as string, 'product');
  const input = productInput(body, false);
  if (Object.keys(input).length === 0) throw bad('nothing to update');
  const { _id: _ignored, createdAt: _created, ...changes } = input as Record<string, unknown>;
  Object.assign(product, changes);
  if (Array.isArray(changes.images)) tenant.images.set(product._id, [...(changes.images as string[])]);
  return product;
}

function deleteProduct({ tenant, params }: HandlerContext) {
  const product = find(tenant.products, '_id', params.productID as string, 'product');
  tenant.products.splice(tenant.products.indexOf(product), 1);
  const images = tenant.images.get(product._id) ?? [];
  tenant.images.delete(product._id);
  return { deleted: product._id, imagesDeleted: images.length };
}

export const productRoutes = [
  route('product.list', 'GET', '/api/product/v1/products', 'product.read', ({ tenant }) => tenant.products),
  route('product.get', 'GET', '/api/product/v1/products/{productID}', 'product.read', ({ tenant, params }) =>
    find(tenant.products, '_id', params.productID as string, 'product'),
  ),
  route('product.create', 'POST', '/api/product/v1/products', 'product.manage', createProduct),
  route('product.update', 'PUT', '/api/product/v1/products/{productID}', 'product.manage', updateProduct),
  route('product.delete', 'DELETE', '/api/product/v1/products/{productID}', 'product.manage', deleteProduct),
];
