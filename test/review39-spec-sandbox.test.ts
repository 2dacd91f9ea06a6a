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
