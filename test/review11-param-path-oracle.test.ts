// review11: validation names a bad field by its path, the field names on the way joined with "."
// (validate.ts checkShape: `${path}.${key}`), and "." is a separator the redactor reads between hex
// pairs. Field names that are each one hex pair ({"61":{"62":…{"x y":1}}}) are nothing of the key
// to the screen (the arguments' JSON: `{"61":{"62":…`) or to prepare (each name alone), but the error
// "params.61.62.….68 has a field named …" is redacted after the join: a right window comes back as
// [redacted], a wrong one as digits. A read-only operation, nothing locks, nothing is sent.
// (The test knows the key; a model needs the window's secret characters some other way: see
// review11-weak-key-formats, where it needs none.)
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
const PAIRS = Buffer.from(KEY.slice(9, 17), 'utf8').toString('hex').match(/../g)!; // 8 secret characters, 16 hex digits
let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([{ _id: 'c1', name: 'Budi' }]));
});
afterAll(async () => api?.close());

const nested = (pairs: string[]) => pairs.reduceRight<unknown>((inner, pair) => ({ [pair]: inner }), { 'x y': 1 });
const isLock = (text: string) => /refused for an hour|arguments hold the API key/.test(text);

describe('review11: a field path joined with "." is an oracle in the validation error', () => {
  it('a right and a wrong guess get the same error, or the key is locked', async () => {
    const server = await inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: KEY } as never });
    try {
      const wrong = [...PAIRS.slice(0, -1), PAIRS.at(-1) === '30' ? '31' : '30'];
      const error = async (pairs: string[]) => {
        const text = textOf(await server.call('contact.list', nested(pairs) as Record<string, unknown>));
        return { text, shown: text.replaceAll(pairs.join('.'), '<path>') };
      };
      const b = await error(wrong);
      const a = await error(PAIRS);
      expect(isLock(b.text)).toBe(false);
      if (!isLock(a.text)) expect(a.shown).toBe(b.shown);
    } finally {
      await server.close();
    }
  });
});
