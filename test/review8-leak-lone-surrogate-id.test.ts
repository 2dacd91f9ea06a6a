// A path id holding a lone surrogate (valid JSON: "\ud800") passes validation (a lone surrogate
// is neither hidden nor a control), then encodeURIComponent throws URIError in fillPath, outside
// the InputError path: the model is told "Internal error in the MCP server; nothing more is
// known", which for a write reads as if its outcome were unknown, and a warning is logged for a
// plain input mistake. Nothing is sent, but the answer should name the bad field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

let api: HostileApi;
let server: InProcess;

beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope({}));
  server = await inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: api.key } as never }, { env: { ENGAGE_CONFIRM: 'none' } });
});
afterAll(async () => {
  await server?.close();
  await api?.close();
});

describe('an id with a lone surrogate', () => {
  it.each(['contact.update', 'contact.delete'])('%s: a refusal that names params.id, not an internal error', async (operationId) => {
    const result = await server.call(operationId, operationId === 'contact.update' ? { id: 'a\ud800', name: 'Budi' } : { id: 'a\ud800' });
    expect(result.isError).toBe(true);
    expect(api.requests).toEqual([]);
    expect(textOf(result)).toMatch(/params\.id/);
  });
});
