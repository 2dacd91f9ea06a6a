// review10: at a cut, 8 characters of the start of a form are redacted; the screen locks only on 12.
// An API that quotes the call's text in its 4xx message (many do) is cut at 2,400 characters, then
// its blanks are collapsed, so the cut's end is shown: "eng_live_" and two guessed characters come
// back as [redacted] when right, as they were written when wrong. Nothing locks.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAINS, inProcess, textOf, type InProcess } from './helpers.js';
import { startHostileApi, type HostileApi } from './hostile-api.js';

const KEY = `eng_live_${randomBytes(20).toString('hex')}`;
const PREFIX = 'could not send: ';
let api: HostileApi;
beforeAll(async () => {
  api = await startHostileApi();
  api.respond((request) => ({ status: 400, body: { message: `${PREFIX}${(JSON.parse(request.body) as { message: string }).message}` } }));
});
afterAll(async () => api?.close());

const channelServer = (): Promise<InProcess> =>
  inProcess(DOMAINS.channel!, { baseUrl: api.baseUrl, keys: { full: KEY } as never }, { env: { ENGAGE_CONFIRM: 'none' } });

describe('review10: the start of a form at a cut is an oracle below the lock', () => {
  it('a right and a wrong guess get the same answer, or the key is locked', async () => {
    const server = await channelServer();
    try {
      const answer = async (guess: string) => {
        const message = `x${' '.repeat(2400 - PREFIX.length - 1 - guess.length)}${guess}${'y'.repeat(50)}`;
        return textOf(await server.call('channel.whatsapp.send', { msisdn: '6281234567890', message })).replaceAll(guess, '<guess>');
      };
      const right = KEY.slice(0, 11);
      const wrong = `${KEY.slice(0, 10)}${KEY[10] === '0' ? '1' : '0'}`;
      const a = await answer(right);
      const b = await answer(wrong);
      if (!/arguments hold the API key/.test(a)) expect(a).toBe(b);
    } finally {
      await server.close();
    }
  });
});
