// A read whose answer is larger than this server reads (64 MiB) was answered "The API's answer was
// larger than 64 MiB and was not read. Try again later.": the same read gets the same answer, so the
// model was sent to repeat a call that cannot succeed. It is told retrying will not help now.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HOSTILE_KEY, startHostileApi, type HostileApi } from './hostile-api.js';
import { DOMAINS, inProcess, textOf } from './helpers.js';

let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
});
afterAll(() => api.close());

it('an answer too large to read says retrying will not help, not "try again later"', async () => {
  // One product record of 65 MiB.
  const body = `{"status":200,"errorCode":0,"data":{"productID":"p1","description":"${'z'.repeat(65 * 1024 * 1024)}"}}`;
  api.respond(() => ({ body }));
  const server = await inProcess(DOMAINS.product!, { baseUrl: api.baseUrl, keys: { full: HOSTILE_KEY } as never });
  try {
    const result = await server.call('product.get', { productID: 'p1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/larger than 64 MiB and was not read\. Retrying will not help: tell the user/);
    expect(textOf(result)).toMatch(/product\.get/);
    expect(textOf(result)).not.toMatch(/Try again later/);
    // It was asked once: the read is not repeated either.
    expect(api.requests.length).toBe(1);
  } finally {
    await server.close();
  }
}, 60_000);
