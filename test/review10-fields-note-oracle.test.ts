// review10: the fields note joins the asked-for field names with ", ", which is a separator the
// redactor reads between hex pairs. Each field name is two hex digits (nothing of the key for the
// screen or prepare), but the note redacts the joined list iff it spells a window of the key's hex:
// a right guess and a wrong one get different answers, and the key is never locked. Now each name
// is quoted on its own, and a window is 16 characters of a form of the key's secret part.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([{ _id: 'c1', name: 'Budi' }]));
});
afterAll(async () => api?.close());

const contactServer = (): Promise<InProcess> =>
  inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: KEY } as never }, { env: { ENGAGE_CONFIRM: 'none' } });
const hexPairs = (text: string) => [...Buffer.from(text, 'utf8').toString('hex').match(/../g)!];

describe('review10: field names joined in a note are an oracle', () => {
  it('a right and a wrong guess at the key get the same answer, or the key is locked', async () => {
    const server = await contactServer();
    try {
      // The known "live_" and a guess at the first secret character: 6 bytes, 12 hex digits.
      const right = KEY[9]!;
      const wrong = right === '0' ? '1' : '0';
      const answer = async (guess: string) => textOf(await server.call('contact.list', undefined, { fields: hexPairs(`live_${guess}`) }));
      const a = await answer(right);
      const b = await answer(wrong);
      const locked = /refused for an hour|arguments hold the API key/.test(a);
      // The guess is the note's last field name, quoted: only that is replaced (its pair can also be one of live_'s, 65 for e).
      const last = (guess: string) => `"${hexPairs(guess).join('')}".`;
      if (!locked) expect(a.replaceAll(last(right), '"G".')).toBe(b.replaceAll(last(wrong), '"G".'));
    } finally {
      await server.close();
    }
  });

  it('the key cannot be spelled out from the notes, one hex character at a time (the attack of the review)', async () => {
    const server = await contactServer();
    try {
      let spelled = 'eng_live_';
      while (spelled.length < KEY.length) {
        const known = spelled.slice(-5);
        let found: string | undefined;
        for (const guess of '0123456789abcdef') {
          const text = textOf(await server.call('contact.list', undefined, { fields: hexPairs(`${known}${guess}`) }));
          expect(text).not.toMatch(/refused for an hour|arguments hold the API key/);
          if (text.includes('[redacted]')) {
            found = guess;
            break;
          }
        }
        if (found === undefined) break;
        spelled += found;
      }
      // Not one secret character: neither 16 hex digits of the secret part in the notes, nor a lock.
      expect(spelled).toBe('eng_live_');
    } finally {
      await server.close();
    }
  }, 60_000);
});
