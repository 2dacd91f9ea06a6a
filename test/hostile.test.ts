// The servers against a hostile API: the key echoed back in every form, answers nested thousands
// deep, errors inside the envelope, absurd Retry-After headers, huge records and bodies that try
// to forge log lines. In process, against the stand-in of hostile-api.ts. What counts is what
// reached the model and the log, and what the API was asked.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiClient } from '../shared/src/upstream/api-client.js';
import { WriteJournal } from '../shared/src/call/journal.js';
import { DOMAINS, inProcess, structuredOf, textOf, type InProcess, type InProcessOptions } from './helpers.js';
import { HOSTILE_KEY, envelope, startHostileApi, type HostileApi } from './hostile-api.js';
import { keyScanner, keyVariants } from './leaks.js';

const MAX_ANSWER_CHARS = 100_000;
let api: HostileApi;
const open: InProcess[] = [];
/** Every answer, elicitation question and log line of this file, scanned for the key at the end. */
const seen: string[] = [];
const scanner = keyScanner(HOSTILE_KEY);

beforeAll(async () => {
  api = await startHostileApi();
});
afterEach(async () => {
  for (const server of open) seen.push(...server.logs);
  await Promise.all(open.splice(0).map((server) => server.close()));
  api.requests.length = 0;
  api.respond(() => envelope([]));
  vi.restoreAllMocks();
});
afterAll(() => api.close());

async function serve(domain: string, env: Record<string, string> = {}, options: Omit<InProcessOptions, 'env'> = {}) {
  const server = await inProcess(
    DOMAINS[domain]!,
    { baseUrl: api.baseUrl, keys: { full: api.key } as never },
    { env: { ENGAGE_CONFIRM: 'none', ...env }, ...options },
  );
  open.push(server);
  return server;
}

async function call(server: InProcess, operationId: string, params?: Record<string, unknown>, extra?: Record<string, unknown>): Promise<CallToolResult> {
  const result = await server.call(operationId, params, extra);
  seen.push(textOf(result), JSON.stringify(result.structuredContent ?? null));
  return result;
}

const size = (result: CallToolResult) => textOf(result).length + JSON.stringify(result.structuredContent ?? null).length;
const expectNoKey = (...texts: string[]) => {
  for (const text of texts) expect(scanner.find(text)).toBeUndefined();
};
const posts = () => api.requests.filter((request) => request.method !== 'GET');

describe('the key echoed back by the API never reaches the model or the log', () => {
  const variants = Object.entries(keyVariants(HOSTILE_KEY));

  it.each(variants)('%s, in a 4xx message cut in the middle of the key', async (_, variant) => {
    const server = await serve('contact');
    // The key starts 24 characters before the 300-character cut of the API's message.
    api.respond(() => ({
      status: 400,
      body: { status: 400, errorCode: 40001, message: `${'Invalid request. '.repeat(16)}key ${variant} is not allowed here` },
    }));
    const result = await call(server, 'contact.list');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/The API rejected contact\.list \(HTTP 400\): “Invalid request/);
    expectNoKey(textOf(result), ...server.logs);
  });

  it('a 10 MB 4xx message, cut early, where cleaning pulls the key forward', async () => {
    const server = await serve('contact');
    api.respond(() => ({ status: 422, body: { status: 422, errorCode: 40001, message: `${'\u200b'.repeat(2_390)}${HOSTILE_KEY}${'x'.repeat(10_000_000)}` } }));
    const result = await call(server, 'contact.list');
    // What the cut left of the key (its public prefix and one character) goes with the cut's last 15 characters.
    expect(textOf(result)).toMatch(/The API rejected contact\.list \(HTTP 422\): “…”/);
    expectNoKey(textOf(result));
  });

  it.each(variants)('%s, in the data of a 200 (a list and untyped data)', async (_, variant) => {
    const contacts = await serve('contact');
    api.respond(() =>
      envelope([
        { _id: 'c1', name: variant, note: `your token is ${variant}.` },
        { _id: 'c2', [variant]: 'as a key' },
      ]),
    );
    const list = await call(contacts, 'contact.list');
    expect(list.isError).toBeFalsy();
    expect(textOf(list)).toContain('[redacted]');
    const billing = await serve('billing');
    api.respond(() => envelope({ quota: { note: variant, nested: [[`x ${variant} y`]] } }));
    const quota = await call(billing, 'billing.quota');
    expect(quota.isError).toBeFalsy();
    expectNoKey(textOf(list), JSON.stringify(list.structuredContent), textOf(quota), JSON.stringify(quota.structuredContent));
  });

  it.each(variants)('%s, in a 5xx body and in a 2xx body that is not JSON, reaches no log line', async (_, variant) => {
    const server = await serve('contact');
    // Where a cut before redaction would leave a start of the key: at the old 1,000-character cut
    // of the body, and at the 2,000-character cut of the log line.
    const message = 'GET /api/user/users: HTTP 500 Internal Server Error: ';
    const body = `upstream failed for ${variant}`.padEnd(990, '.') + variant;
    api.respond(() => ({ status: 500, body: `${body.padEnd(2_000 - message.length - 10, '.')}${variant}` }));
    expect((await call(server, 'contact.list')).isError).toBe(true);
    // Past the logger's first cut (32,000 characters): the key straddles it.
    api.respond(() => ({ status: 200, body: `${'<p>'.repeat(10_664)}${variant}${'<p>'.repeat(100)}` }));
    expect((await call(server, 'contact.list')).isError).toBe(true);
    expect(server.logs.join('\n')).toMatch(/upstream failed for/);
    expectNoKey(...server.logs);
  });

  it.each(variants)("%s, as a customer's name in a preview and in the question to the person", async (_, variant) => {
    api.respond((request) =>
      request.method === 'GET' ? envelope([{ ticketID: 'T1', customerName: variant, msisdn: variant, channel: 'whatsapp', status: 'open' }]) : envelope({}),
    );
    const questions: string[] = [];
    const asking = await serve(
      'inbox',
      { ENGAGE_CONFIRM: 'destructive' },
      {
        elicit: (message) => {
          questions.push(message);
          return { action: 'decline' };
        },
      },
    );
    await call(asking, 'inbox.ticket.reply', { ticketID: 'T1', message: 'Siap kak' });
    const previewing = await serve('inbox', { ENGAGE_CONFIRM: 'destructive' });
    const preview = await call(previewing, 'inbox.ticket.reply', { ticketID: 'T1', message: 'Siap kak' });
    expect(structuredOf(preview).outcome).toBe('preview');
    expect(questions).toHaveLength(1);
    seen.push(...questions);
    expectNoKey(...questions, textOf(preview), JSON.stringify(preview.structuredContent));
    expect(posts()).toEqual([]);
  });
});

describe('search and projection are no oracle for the key', () => {
  // The key sits in list data (an API that echoes it into a record). Counting the records a
  // search matches, one guessed character at a time, must tell nothing about it.
  const KEY_RECORDS = [
    { _id: 'k1', note: `token=${HOSTILE_KEY}`, secret: HOSTILE_KEY, [HOSTILE_KEY]: 'as a field name' },
    { _id: 'k2', note: 'token= none', secret: 'none' },
  ];
  const ALPHABET = [...new Set(`${HOSTILE_KEY}abcdefghijklmnopqrstuvwxyz0123456789_-`)];
  const matched = async (server: InProcess, search: string, fields?: string[]) => {
    const result = await call(server, 'contact.list', undefined, { search, ...(fields ? { fields } : {}) });
    expect(result.isError).toBeFalsy();
    return (structuredOf(result).page as { matched: number }).matched;
  };

  it('guessing the key a character at a time by counting matches recovers nothing', async () => {
    const server = await serve('contact');
    api.respond(() => envelope(KEY_RECORDS));
    // The attack of the report: extend a known start with the guess that still matches. The key's
    // public prefix (eng_live_, the same in every key) is no secret and matches; nothing after it does.
    let known = 'token=eng_live_';
    for (let step = 0; step < 6; step++) {
      let next: string | undefined;
      for (const guess of ALPHABET) if ((await matched(server, `${known}${guess}`.slice(-10))) > 0) next = guess;
      if (next === undefined) break;
      known += next;
    }
    expect(known).toBe('token=eng_live_');
    // Any piece of the key's secret part, a window across its edge, equality with it: no match.
    for (const piece of [HOSTILE_KEY.slice(9, 12), HOSTILE_KEY.slice(9, 14), `_${HOSTILE_KEY.slice(9, 11)}`, HOSTILE_KEY.slice(-4)]) {
      expect({ piece, matched: await matched(server, piece) }).toEqual({ piece, matched: 0 });
    }
    // Text outside the key still matches as before.
    expect(await matched(server, 'token=')).toBe(2);
    expect(await matched(server, 'none')).toBe(1);
    expect(await matched(server, 'secret:none')).toBe(1);
    // A search word holding the key (12 characters of a form or more) is a guess at it: it locks the key (key-guesses.ts).
    const guessed = await call(server, 'contact.list', undefined, { search: `secret:${HOSTILE_KEY}` });
    expect(guessed.isError).toBe(true);
    expect(textOf(guessed)).toMatch(/arguments hold the API key/);
    expectNoKey(textOf(guessed));
  });

  it('fields naming the key are a guess at it: the key is locked, and the answer shows nothing of it', async () => {
    const server = await serve('contact');
    api.respond(() => envelope(KEY_RECORDS));
    const result = await call(server, 'contact.list', undefined, { fields: [HOSTILE_KEY.slice(0, 20), HOSTILE_KEY] });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/arguments hold the API key/);
    expectNoKey(textOf(result), JSON.stringify(result.structuredContent ?? null));
  });

  it('the streamed path (a body over 1 MiB) counts exactly as the simple path', async () => {
    const server = await serve('contact');
    const filler = Array.from({ length: 9_000 }, (_, index) => ({ _id: `f${index}`, note: `token=filler-${index} ${'x'.repeat(100)}` }));
    api.respond(() => envelope([...KEY_RECORDS, ...filler]));
    for (const piece of [HOSTILE_KEY.slice(9, 12), `token=${HOSTILE_KEY.slice(0, 10)}`, HOSTILE_KEY.slice(20, 24)]) {
      expect({ piece, matched: await matched(server, piece) }).toEqual({ piece, matched: 0 });
    }
    expect(await matched(server, 'none')).toBe(1);
    expect(await matched(server, 'token=')).toBe(9_002);
  });
});

describe('shaping is linear: no answer stalls a server', () => {
  it('an answer nested 100,000 deep is shown to 64 levels', async () => {
    const server = await serve('billing');
    api.respond(() => ({ body: `{"status":200,"errorCode":0,"data":${'['.repeat(100_000)}${']'.repeat(100_000)}}` }));
    const result = await call(server, 'billing.quota');
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toMatch(/not shown: nested more than 64 levels deep/);
    const ping = await server.client.ping();
    expect(ping).toEqual({});
  });

  it('2,000 levels of arrays, each with a long text (minutes when every level was measured again in every round)', async () => {
    const server = await serve('billing');
    const text = 'x'.repeat(2_000);
    // The nested list comes first, so halving the largest list keeps the nesting for the next round.
    api.respond(() => ({ body: `{"status":200,"errorCode":0,"data":${'['.repeat(2_000)}null${`,"${text}",1]`.repeat(2_000)}}` }));
    const result = await call(server, 'billing.quota');
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(size(result)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(textOf(result)).toMatch(/too large and was shortened/);
  });
});

describe('an error inside a 2xx envelope is an error', () => {
  it('for a write: the outcome is unknown, and the answer names the check', async () => {
    const server = await serve('campaign');
    api.respond(() => ({ body: { status: 500, errorCode: 50000, message: 'queue\nunavailable', data: null } }));
    const result = await call(server, 'campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /envelope reports a failure \(status 500, errorCode 50000: “queue unavailable”\)\. The outcome is unknown: campaign\.send may have been carried out, so it was not repeated; check with campaign\.progress/,
    );
    expect(textOf(result)).not.toMatch(/Done/);
  });

  it('for a read: a non-zero errorCode with status 200', async () => {
    const server = await serve('billing');
    api.respond(() => envelope({ remaining: 5 }, 200, 7));
    const result = await call(server, 'billing.quota');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/envelope reports a failure \(status 200, errorCode 7\)\. Try again later/);
  });

  it('a 4xx status in the envelope is a refusal like an HTTP 4xx', async () => {
    const server = await serve('campaign');
    api.respond(() => ({ body: { status: 404, errorCode: 40401, message: 'no such campaign', data: null } }));
    const result = await call(server, 'campaign.cancel', { id: 'nope' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /Not found \(HTTP 404\): “no such campaign”\. campaign\.cancel was not carried out; nothing was changed\. Use campaign\.list to find valid ids/,
    );
  });
});

describe('a write the API carried out is reported as carried out', () => {
  it('a 50,000-deep answer to campaign.send: done, with the deep part not shown', async () => {
    const server = await serve('campaign');
    api.respond(() => ({ body: `{"status":200,"errorCode":0,"data":{"_id":"c1","trace":${'['.repeat(50_000)}${']'.repeat(50_000)}}}` }));
    const result = await call(server, 'campaign.send', { id: 'c1' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(structuredOf(result).outcome).toBe('done');
    expect(textOf(result)).toMatch(/Done: campaign\.send was carried out/);
    expect(textOf(result)).not.toMatch(/nothing more is known/);
  });

  it("the server's own failure after the API answered: carried out, see the result with …", async () => {
    vi.spyOn(WriteJournal.prototype, 'record').mockImplementation(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    const server = await serve('campaign');
    api.respond(() => envelope({ _id: 'c1', status: 'sending' }));
    const result = await call(server, 'campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /The API answered that campaign\.send was carried out, but the MCP server failed.*see the result with campaign\.progress\. Do not repeat it/,
    );
  });

  it("the server's own failure while the write was in flight: may have been carried out; check with …", async () => {
    vi.spyOn(ApiClient.prototype, 'request').mockRejectedValue(new TypeError('socket exploded'));
    const server = await serve('campaign');
    const result = await call(server, 'campaign.send', { id: 'c1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/campaign\.send may have been carried out, so it was not repeated; check with campaign\.progress/);
    expect(textOf(result)).not.toMatch(/nothing more is known/);
  });
});

describe('Retry-After is capped for later calls', () => {
  it.each([
    ['999999 seconds', '999999', '0'],
    ['an HTTP date in the year 9999', 'Fri, 31 Dec 9999 23:59:59 GMT', '1'],
  ])('after %s, the next call asks the API again', async (_, retryAfter, maxWait) => {
    const server = await serve('contact', { ENGAGE_MAX_RETRY_WAIT_S: maxWait });
    let first = true;
    api.respond(() => {
      if (!first) return envelope([{ _id: 'c1' }]);
      first = false;
      return { status: 429, headers: { 'retry-after': retryAfter }, body: { status: 429, errorCode: 42900, message: 'slow down' } };
    });
    const refused = await call(server, 'contact.list');
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/rate limit is exhausted \(HTTP 429\); contact\.list was not carried out\. Try again in 86400 seconds/);
    const next = await call(server, 'contact.list');
    expect(next.isError, textOf(next)).toBeFalsy();
    expect(api.requests).toHaveLength(2);
  });
});

describe('every answer is capped, errors and previews too', () => {
  it('60,000 unknown fields in params: a short error', async () => {
    const server = await serve('contact');
    const params = Object.fromEntries(Array.from({ length: 60_000 }, (_, index) => [`field${index}`, 1]));
    const result = await call(server, 'contact.create', { name: 'A', msisdn: '081234567890', ...params });
    expect(result.isError).toBe(true);
    expect(size(result)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(textOf(result)).toMatch(/params\.field0 is not a field of this operation.*and 59990 more fields that are not/);
    expect(api.requests).toEqual([]);
  });

  it('60,000 unknown tool arguments: within the cap', async () => {
    const server = await serve('contact');
    const extra = Object.fromEntries(Array.from({ length: 60_000 }, (_, index) => [`argument${index}`, 1]));
    const result = await call(server, 'contact.list', undefined, extra);
    expect(result.isError).toBe(true);
    expect(size(result)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(textOf(result)).toMatch(/argument0, argument1, argument2, argument3, argument4 and 59995 more are not arguments of contact_read/);
  });

  it('a preview too long to show whole is refused, and nothing is sent', async () => {
    const server = await serve('channel', { ENGAGE_CONFIRM: 'destructive' });
    const parameters = Array.from({ length: 50 }, (_, index) => `${index} ${'p'.repeat(1_000)}`);
    const result = await call(server, 'channel.whatsapp.send', { msisdn: '081234567890', template: { name: 'promo', parameters } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/more than can be shown whole .* Nothing was sent/);
    expect(size(result)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(posts()).toEqual([]);
  });
});

describe('log lines cannot be forged', () => {
  it('newlines and terminal escapes of a 5xx body are escaped or removed', async () => {
    const server = await serve('contact');
    api.respond(() => ({ status: 500, body: 'oops\n[engage-mcp-contact] error: the key was rotated, paste it here\r\n\u001b[2J\u001b[31mRED\u202e' }));
    await call(server, 'contact.list');
    const line = server.logs.find((entry) => entry.includes('oops'))!;
    expect(line).toBeDefined();
    expect(line.indexOf('\n')).toBe(line.length - 1);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character must never reach a log line
    expect(line).not.toMatch(/[\u001b\r\u202e]/);
    expect(line).toContain('oops\\n[engage-mcp-contact] error: the key was rotated');
  });
});

describe('a record larger than a whole answer', () => {
  it('is shown as a stub with its id, and paging moves past it', async () => {
    const server = await serve('contact');
    api.respond(() =>
      envelope([
        { _id: 'small-0', name: 'A' },
        { _id: 'huge-1', name: 'B', notes: 'n'.repeat(200_000) },
        { _id: 'small-2', name: 'C' },
      ]),
    );
    const second = await call(server, 'contact.list', undefined, { limit: 1, offset: 1 });
    expect(structuredOf(second).data).toEqual([{ _id: 'huge-1', _omitted: expect.stringMatching(/more than one answer can hold/) }]);
    expect(structuredOf(second).page).toMatchObject({ offset: 1, returned: 1, nextOffset: 2 });
    expect(textOf(second)).toMatch(/offset 1 are larger than a whole answer and are shown as a stub/);
    const all = await call(server, 'contact.list');
    expect((structuredOf(all).data as Array<{ _id: string }>).map((record) => record._id)).toEqual(['small-0', 'huge-1', 'small-2']);
    expect(size(all)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  });
});

describe('the key', () => {
  it('appears in no answer, question or log line of these tests, in any form', () => {
    expect(seen.join('').length).toBeGreaterThan(10_000);
    for (const text of seen) expect(scanner.find(text)).toBeUndefined();
  });
});
