// review11: "a window takes at least 8 of the key's secret characters" held only when what
// secretPartOf leaves is all secret and at least 16 characters long. It is not so:
// - a key whose rest after the prefix is under 16 characters (`eng_live_` and 12): the whole key,
//   public prefix included, is the "secret part", so the prefix's own hex is a window (the
//   public-prefix lock of review10 is back) and "g_live_" + one guessed character is a window: with
//   any oracle (review11-param-path-oracle) the key is spelled out a character at a time, no lock;
// - public text the prefix pattern does not strip (a segment with a digit, a fourth word):
//   `eng_live_2024_11_…` has "2024_11_" in its secret part, 16 hex digits of public text (left as
//   it is: README, what the model gets back; the API's keys are documented as a fixed prefix and
//   the rest);
// - the pattern strips secret letters from a key with no prefix (base64url keys hold `-` and `_`):
//   the full key echoed by the API shows them beside [redacted].
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyRedactor } from '../shared/src/safe/redact.js';
import { DOMAINS, inProcess, textOf } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');
const HEX = '0123456789abcdef';

describe('review11: key formats where a window takes fewer than 8 secret characters', () => {
  it('a key with under 16 characters after its prefix: the public prefix alone is never redacted', () => {
    const redact = keyRedactor([`eng_live_${randomBytes(6).toString('hex')}`]);
    expect(redact(hex('eng_live_'))).toBe(hex('eng_live_'));
  });

  it('a key with no prefix: an echo of it shows none of its characters', () => {
    const key = `kQzPbWmRtY-${randomBytes(24).toString('base64url')}`;
    expect(keyRedactor([key])(`your key is ${key}`)).toBe('your key is [redacted]');
  });
});

describe('review11: a key with a short secret part is spelled out with no lock', () => {
  const KEY = `eng_live_${randomBytes(6).toString('hex')}`; // 21 characters, 12 after the prefix
  let api: HostileApi;
  beforeAll(async () => {
    api = await startHostileApi();
    api.respond(() => envelope([{ _id: 'c1', name: 'Budi' }]));
  });
  afterAll(async () => api?.close());

  it('the field-path oracle, from the public prefix, one character at a time', async () => {
    const server = await inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: KEY } as never });
    try {
      let spelled = 'eng_live_';
      while (spelled.length < KEY.length) {
        let found: string | undefined;
        for (const guess of HEX) {
          const pairs = hex(`${spelled.slice(-7)}${guess}`).match(/../g)!;
          const params = pairs.reduceRight<unknown>((inner, pair) => ({ [pair]: inner }), { 'x y': 1 }) as Record<string, unknown>;
          const text = textOf(await server.call('contact.list', params));
          if (/refused for an hour|arguments hold the API key/.test(text)) throw new Error('locked');
          if (text.includes('[redacted]')) {
            found = guess;
            break;
          }
        }
        if (found === undefined) break;
        spelled += found;
      }
      expect(spelled).not.toBe(KEY);
    } finally {
      await server.close();
    }
  }, 60_000);
});
