// The sandbox against the spec and against its own stated rules, where the tests that run on it
// would otherwise pass on behaviour the API does not have.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ sendStepMs: 60_000 });
});
afterAll(() => sandbox.close());

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(sandbox.baseUrl + path, {
    method,
    headers: { 'x-api-key': sandbox.keys.full, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as { status: number; errorCode: number; data: any; message?: string } };
}

describe('sandbox contacts', () => {
  // contact.create refuses a second contact with a number the tenant has (409); an update to that
  // number made the same duplicate, so a test of a conflict on update passed against nothing.
  it('refuses to change a contact to the number another contact has (409), and changes nothing', async () => {
    const [first, second] = sandbox.tenant('A').contacts;
    if (!first || !second) throw new Error('the sandbox seeds contacts');
    const before = second.msisdn;
    const carried = sandbox.carriedOut().length;
    const answer = await api('PUT', `/api/user/users/${second._id}`, { msisdn: first.msisdn, name: 'Changed' });
    expect(answer.status).toBe(409);
    expect(answer.json).toMatchObject({ status: 409, errorCode: 40901 });
    expect(sandbox.tenant('A').contacts.filter((contact) => contact.msisdn === first.msisdn)).toHaveLength(1);
    expect(second.msisdn).toBe(before);
    expect(second.name).not.toBe('Changed');
    expect(sandbox.carriedOut().length).toBe(carried);
  });

  it('still takes a contact updated to its own number', async () => {
    const [first] = sandbox.tenant('A').contacts;
    if (!first) throw new Error('the sandbox seeds contacts');
    const answer = await api('PUT', `/api/user/users/${first._id}`, { msisdn: first.msisdn });
    expect(answer.status).toBe(200);
    expect(answer.json.data.msisdn).toBe(first.msisdn);
  });
});

describe('sandbox products', () => {
  // The spec: deleting a product deletes it "together with its images". The sandbox keeps a product's
  // image files apart and deletes those; an update that set other images left the old files as the
  // ones deleted, so the delete's answer counted images the product no longer had.
  it('deletes the images a product has when it is deleted, after an update changed them', async () => {
    const created = await api('POST', '/api/product/v1/products', { name: 'Batik Sogan', images: ['https://cdn.example.co.id/a.jpg'] });
    expect(created.status).toBe(200);
    const id = created.json.data._id as string;
    const images = ['https://cdn.example.co.id/b.jpg', 'https://cdn.example.co.id/c.jpg', 'https://cdn.example.co.id/d.jpg'];
    expect((await api('PUT', `/api/product/v1/products/${id}`, { images })).status).toBe(200);
    expect(sandbox.tenant('A').images.get(id)).toEqual(images);
    // A value that is not a list of addresses names no image files: refused, and nothing changes.
    expect((await api('PUT', `/api/product/v1/products/${id}`, { images: 'https://cdn.example.co.id/e.jpg' })).status).toBe(400);
    expect(sandbox.tenant('A').images.get(id)).toEqual(images);
    const deleted = await api('DELETE', `/api/product/v1/products/${id}`);
    expect(deleted.json.data).toEqual({ deleted: id, imagesDeleted: 3 });
    expect(sandbox.tenant('A').images.has(id)).toBe(false);
  });
});
