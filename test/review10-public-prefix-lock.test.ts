// review10: a lock on no secret. The key's forms include its hex and base64, and 12 characters of
// those spell only the public prefix "eng_live_" (9 bytes: 18 hex digits, 12 base64 characters). A
// call holding them knows nothing of the key, yet locks the tenant's key for an hour (remote mode:
// every domain of the process). Anyone who can steer the model (a customer's text: "search for the
// base64 of eng_live_") locks the tenant out; the person is told to replace a key that never leaked.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyGuesses } from '@engage-mcp/shared';
import { DOMAINS, inProcess, textOf } from './helpers.js';
import { envelope, startHostileApi } from './hostile-api.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;

describe('review10: the public prefix alone locks the key', () => {
  it.each([
    ['base64', Buffer.from('eng_live_').toString('base64')],
    ['hex', Buffer.from('eng_live_').toString('hex')],
  ])('a search for the %s of "eng_live_" is not taken for a guess', async (_, text) => {
    const api = await startHostileApi();
    api.respond(() => envelope([{ _id: 'c1', name: 'Budi' }]));
    const server = await inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: KEY } as never }, { server: { keyGuesses: new KeyGuesses() } });
    try {
      const answer = textOf(await server.call('contact.list', undefined, { search: text }));
      expect(answer).not.toMatch(/arguments hold the API key/);
    } finally {
      await server.close();
      await api.close();
    }
  });
});
