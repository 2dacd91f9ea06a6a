// The sandbox held to the API's own document where it was more lenient than it (review 27b).
// A sandbox that accepts what the API refuses hides a client's mistake from every test.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../packages/sandbox/src/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

async function raw(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(sandbox.baseUrl + path, { method, headers, ...(body === undefined ? {} : { body }) });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as { status: number; errorCode: number; data: unknown; message?: string },
  };
}

describe('request bodies are application/json (spec section 4)', () => {
  const contact = (msisdn: string) => JSON.stringify({ name: 'Tono Media', msisdn });

  it('refuses a JSON body sent as another media type, and carries nothing out', async () => {
    sandbox.clearLogs();
    const before = sandbox.tenant('A').contacts.length;
    const key = { 'x-api-key': sandbox.keys.full };
    // fetch() labels a string body text/plain unless told otherwise: the mistake a client makes by leaving the header out.
    const unlabelled = await raw('POST', '/api/user/users', key, contact('6281299990001'));
    const form = await raw('POST', '/api/user/users', { ...key, 'content-type': 'application/x-www-form-urlencoded' }, contact('6281299990002'));
    const text = await raw('PUT', `/api/user/users/${sandbox.tenant('A').contacts[0]?._id}`, { ...key, 'content-type': 'text/plain' }, '{"name":"Changed"}');
    for (const answer of [unlabelled, form, text]) {
      expect(answer.status).toBe(400);
      expect(answer.json).toMatchObject({ status: 400, errorCode: 40001 });
      expect(answer.json.message).toMatch(/application\/json/);
      expect(answer.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    }
    expect(sandbox.tenant('A').contacts.length).toBe(before);
    expect(sandbox.tenant('A').contacts[0]?.name).not.toBe('Changed');
    expect(sandbox.carriedOut()).toEqual([]);
  });

  it('takes the same body labelled application/json, with or without parameters, and a write with no body at all', async () => {
    const key = { 'x-api-key': sandbox.keys.full };
    expect((await raw('POST', '/api/user/users', { ...key, 'content-type': 'application/json' }, contact('6281299990003'))).status).toBe(200);
    expect((await raw('POST', '/api/user/users', { ...key, 'content-type': 'Application/JSON; charset=utf-8' }, contact('6281299990004'))).status).toBe(200);
    const draft = sandbox.tenant('A').campaigns.find((campaign) => campaign.status === 'draft');
    // campaign.cancel takes no body: none sent, no media type needed (409: a draft is not sending).
    expect((await raw('POST', `/api/campaign/campaigns/${draft?._id}/cancel`, key)).status).toBe(409);
  });
});

describe('every endpoint requires a key first (spec section 5)', () => {
  it('answers a request without a valid key 401 even when its path is malformed', async () => {
    const answer = await raw('GET', '/api/ai/v1/tickets/%E0%A4', {});
    expect(answer.status).toBe(401);
    expect(answer.json).toMatchObject({ status: 401, errorCode: 40100 });
  });

  it('answers the malformed path of a valid key 400, with the RateLimit headers every response carries', async () => {
    const answer = await raw('GET', '/api/ai/v1/tickets/%E0%A4', { 'x-api-key': sandbox.keys.full });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ status: 400, errorCode: 40001 });
    for (const header of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(answer.headers.get(header)).toMatch(/^\d+$/);
  });
});
