// review8: the key-holding check as an oracle. A model (or a prompt injection steering it) could
// grow a guess at the key a character at a time, told by each refusal which argument held a part
// of the key. Now the first call whose arguments hold a part of the key locks the key: that answer
// names no argument, and every later call made with the key is refused, right guess or wrong.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { envelope, startHostileApi, type HostileApi } from './hostile-api.js';

/** A key like the sandbox's: the fixed prefix and 40 random hex digits. */
const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
const KNOWN_PREFIX = 'eng_live_';
/** What the redactor takes for the key: 16 characters of its secret part (after the public prefix). */
const SECRET = KEY.slice(KNOWN_PREFIX.length);
const WINDOW = 16;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789_';
let api: HostileApi;

beforeAll(async () => {
  api = await startHostileApi();
  api.respond(() => envelope([{ _id: 'c1', name: 'Budi' }]));
});
afterAll(async () => api?.close());

async function contactServer(): Promise<InProcess> {
  return inProcess(DOMAINS.contact!, { baseUrl: api.baseUrl, keys: { full: KEY } as never }, { env: { ENGAGE_CONFIRM: 'none' } });
}

describe('review8: a guess at the key locks the key', () => {
  it('the public prefix and a few guessed characters are never taken for the key: nothing locks, every candidate gets the same answer', async () => {
    const server = await contactServer();
    try {
      const answers = new Set<string>();
      const head: string[] = [];
      for (const a of ALPHABET) for (const b of ALPHABET) for (const c of ALPHABET) head.push(`${KNOWN_PREFIX}${a}${b}${c}`);
      for (let at = 0; at < head.length; at += 5_000) {
        const params = Object.fromEntries(head.slice(at, at + 5_000).map((candidate, index) => [`c${index}`, candidate]));
        answers.add(textOf(await server.call('contact.list', params)).replace(/params\.c\d+/g, 'params.c'));
      }
      expect([...answers].some((text) => /API key/.test(text))).toBe(false);
      const plain = await server.call('contact.list', undefined);
      expect(plain.isError).toBeFalsy();
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a window of the secret part in the arguments locks the key: the answer names no argument, and every call after it is refused', async () => {
    const server = await contactServer();
    const before = api.requests.length;
    try {
      const first = textOf(await server.call('contact.list', { note: `x ${SECRET.slice(3, 3 + WINDOW)} y` }));
      expect(first).toMatch(/arguments hold the API key/);
      expect(first).not.toMatch(/params\.note/);
      const plain = await server.call('contact.list', undefined);
      expect(plain.isError).toBe(true);
      expect(textOf(plain)).toMatch(/every call made with it is refused for an hour.*replaced/);
      expect(api.requests.length).toBe(before);
      // The operator's log says so, naming no argument and nothing of the key.
      expect(server.logs.join('\n')).toMatch(/held a window of the API key .*replace the key/);
      expect(server.logs.join('\n')).not.toContain(SECRET.slice(3, 3 + WINDOW));
    } finally {
      await server.close();
    }
  });

  // An operationId that is none of the tool's is refused by the arguments' parser before the call
  // runs, quoting it as written: a right guess and a wrong one get the same answer there too.
  it('operationId: a right and a wrong guess get the same answer', async () => {
    const server = await contactServer();
    try {
      const answer = async (guess: string) =>
        textOf((await server.client.callTool({ name: 'contact_read', arguments: { operationId: guess } })) as never).replaceAll(guess, '<guess>');
      expect(await answer(SECRET.slice(0, WINDOW))).toBe(await answer(`${SECRET.slice(0, WINDOW - 1)}${SECRET[WINDOW - 1] === 'z' ? 'y' : 'z'}`));
    } finally {
      await server.close();
    }
  });

  it.each([
    ['a field name', (server: InProcess, guess: string) => server.call('contact.list', { [guess]: 'x' })],
    ['fields', (server: InProcess, guess: string) => server.call('contact.list', undefined, { fields: [guess] })],
    ['search', (server: InProcess, guess: string) => server.call('contact.list', undefined, { search: guess })],
    [
      'idempotencyKey',
      (server: InProcess, guess: string) => server.call('contact.create', { name: 'Budi', msisdn: '6281234567890' }, { idempotencyKey: guess }),
    ],
  ])('%s: once one guess held a part of the key, a right and a wrong guess get the same answer', async (_, probe) => {
    const server = await contactServer();
    try {
      const right = SECRET.slice(0, WINDOW);
      const wrong = `${SECRET.slice(0, WINDOW - 1)}${SECRET[WINDOW - 1] === 'z' ? 'y' : 'z'}`;
      const first = textOf(await probe(server, right));
      expect(first).toMatch(/arguments hold the API key/);
      expect(first).not.toContain(right);
      const answer = async (guess: string) => textOf(await probe(server, guess)).replaceAll(guess, '<guess>');
      expect(await answer(right)).toBe(await answer(wrong));
    } finally {
      await server.close();
    }
  });
});
