// review11: previews join what the model wrote in several places into text the screen (the
// arguments' JSON) and prepare (each string, the validated params' JSON) never see whole, and the
// statement is redacted after the join. Each piece is under a window, the joined text holds one:
// the preview comes back with [redacted] for a right guess and with the digits for a wrong one,
// nothing is sent and nothing locks. (The test knows the key; a model needs such a window's
// secret characters some other way: see review11-weak-key-formats.) ENGAGE_CONFIRM=all: these
// writes are previewed (the default gates destructive writes only; channel.whatsapp.send is one,
// with the same kind of join: the template's parameters).
// - contact.create: "(msisdn, email)": the number's last two digits, ", ", and "aa.bb.…@x" in the email.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
const PAIRS = Buffer.from(KEY.slice(9, 17), 'utf8').toString('hex').match(/../g)!; // 8 secret characters, 16 hex digits
let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([]));
});
afterAll(async () => api?.close());

const serve = (domain: string): Promise<InProcess> =>
  inProcess(DOMAINS[domain]!, { baseUrl: api.baseUrl, keys: { full: KEY } as never }, { env: { ENGAGE_CONFIRM: 'all' } });
/** The same pairs with the last one wrong. */
const wrongOf = (pairs: string[]) => [...pairs.slice(0, -1), pairs.at(-1) === '30' ? '31' : '30'];
const normal = (text: string) =>
  text
    .replace(/confirmationToken\S*\s*\S+/g, '')
    .replace(/[A-Za-z0-9_-]{40,}/g, '<token>')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>');
const isLock = (text: string) => /refused for an hour|arguments hold the API key/.test(text);

describe('review11: a preview joins the model’s pieces into a window no screen saw', () => {
  it('contact.create: the number and the email, joined with ", "', async () => {
    const server = await serve('contact');
    try {
      // The first pair of a hex key's hex form is digits (3x or 6x): the number's last two digits.
      const preview = async (pairs: string[]) => {
        const text = textOf(
          await server.call('contact.create', { name: 'Budi', msisdn: `6281234${pairs[0]}`, email: `${pairs.slice(1).join('.')}@example.com` }),
        );
        return { text, shown: normal(text).replaceAll(`6281234${pairs[0]}, ${pairs.slice(1).join('.')}`, '<joined>') };
      };
      const wrong = await preview(wrongOf(PAIRS));
      const right = await preview(PAIRS);
      expect(isLock(wrong.text)).toBe(false);
      if (!isLock(right.text)) expect(right.shown).toBe(wrong.shown);
      expect(api.requests.filter((request) => request.method === 'POST')).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
