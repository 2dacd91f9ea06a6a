// review10: msisdn() normalises "62 336-139-663-361" to "62336139663361" after the screen and the
// per-string check have seen only 3-digit groups. The preview's statement shows the normalised
// number, redacted: a 12-digit window of the key's hex form (its secret part is all decimal: 3x, 6x)
// comes back as [redacted], a wrong one as digits. No write is sent, and nothing locks.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([]));
});
afterAll(async () => api?.close());

const channelServer = (): Promise<InProcess> => inProcess(DOMAINS.channel!, { baseUrl: api.baseUrl, keys: { full: KEY } as never });
/** 12 digits as groups of three: no run, no hex pairs with separators. */
const grouped = (digits: string) => `62 ${digits.match(/.../g)!.join('-')}`;

describe('review10: a normalised msisdn is an oracle in the preview', () => {
  it('a right and a wrong 12-digit window get the same preview, or the key is locked', async () => {
    const server = await channelServer();
    try {
      const hex = Buffer.from(KEY.slice(9), 'utf8').toString('hex'); // all decimal digits
      const right = hex.slice(0, 12);
      const wrong = `${right.slice(0, 11)}${right[11] === '0' ? '1' : '0'}`;
      const preview = async (digits: string) =>
        textOf(await server.call('channel.whatsapp.send', { msisdn: grouped(digits), message: 'Halo' }))
          .replaceAll(digits, '<digits>')
          .replace(/confirmationToken\S*\s*\S+/g, '')
          .replace(/[A-Za-z0-9_-]{40,}/g, '<token>')
          .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
      const a = await preview(right);
      const b = await preview(wrong);
      const locked = /refused for an hour|arguments hold the API key/.test(a);
      if (!locked) expect(a).toBe(b);
      expect(api.requests.filter((request) => request.method === 'POST')).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
