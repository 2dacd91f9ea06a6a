// review10: the lock's own answer is the oracle. A wrong guess gets an ordinary answer and locks
// nothing; a right one gets "arguments hold the API key" and locks the key for an hour. So each
// lock tells one right guess, and a lock that ends (an hour later, a restart, another replica)
// lets the next one be found: trying candidates one a call costs one lock per character.
// Now a window is 16 characters of the key's secret part: a guess grown from the public prefix
// never holds one.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { KeyGuesses } from '@engage-mcp/shared';
import { DOMAINS, inProcess, textOf } from './helpers.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
const HEX = '0123456789abcdef';

describe('review10: a lock that ends lets the key be spelled out one lock at a time', () => {
  it('the key cannot be spelled out by a caller who waits out each lock', async () => {
    let now = Date.now();
    const server = await inProcess(
      DOMAINS.contact!,
      { baseUrl: 'http://127.0.0.1:9', keys: { full: KEY } as never },
      {
        server: { keyGuesses: new KeyGuesses(() => now) },
      },
    );
    try {
      let locks = 0;
      /** Does one of `guesses` hold a part of the key? Waits out the lock it caused. */
      const holds = async (guesses: string[]) => {
        const text = textOf(await server.call('contact.list', Object.fromEntries(guesses.map((guess, index) => [`c${index}`, guess]))));
        expect(text).not.toMatch(/^A call made with this API key held/); // never probed while locked
        const hit = /arguments hold the API key/.test(text);
        if (hit) {
          locks++;
          now += 60 * 60 * 1000 + 1; // an hour later (or a restart, or the next replica)
        }
        return hit;
      };
      // The attack as the review ran it: the public prefix and three guessed characters, one a call.
      // No such text is a window of the key (16 characters of its secret part), so no candidate
      // locks, and every answer is the same: the guess learns nothing to grow from.
      const first: string[] = [];
      for (const a of HEX) for (const b of HEX) for (const c of HEX) first.push(`eng_live_${a}${b}${c}`);
      let found: string | undefined;
      for (const candidate of first) if (!found && (await holds([candidate]))) found = candidate;
      expect(found).toBeUndefined();
      expect(locks).toBe(0);
    } finally {
      await server.close();
    }
  }, 60_000);
});
