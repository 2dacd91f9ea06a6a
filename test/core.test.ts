// Unit tests of the core's subtle logic: configuration, retry and pacing policy, tokens,
// rendering, cleaning and redaction.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, matchesPattern, redactor } from '@engage-mcp/shared';
import { loadDotenvSafely } from '../shared/src/model/config.js';
import { Confirmations, MemorySpentStore, canonicalJson } from '../shared/src/call/confirmations.js';
import { createLogger } from '../shared/src/safe/log.js';
import { jsonSchemaValidator } from '../shared/src/mcp/register.js';
import { ACTION_OUTPUT_SCHEMA, READ_OUTPUT_SCHEMA } from '../shared/src/mcp/tools.js';
import { LineLimit } from '../shared/src/mcp/stdio.js';
import { Pacer, backoffDelayMs, parseRetryAfter } from '../shared/src/upstream/pacing.js';
import { keyRedactor } from '../shared/src/safe/redact.js';
import { MAX_ANSWER_CHARS, fitData, fitValue, scrubber, shapeList } from '../shared/src/safe/render.js';
import { cleanData, cleanText } from '../shared/src/safe/sanitize.js';
import { keyScanner, keyVariants } from './leaks.js';

const BASE = { ENGAGE_API_KEY: 'eng_live_secret', ENGAGE_BASE_URL: 'https://api.example.com' };
const ids = ['campaign.list', 'campaign.send', 'campaign.delete'];

describe('configuration', () => {
  it('reads every variable with its default', () => {
    const result = loadConfig(BASE, 'campaign', ids);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config).toMatchObject({
      authHeader: 'x-api-key',
      timeoutMs: 30_000,
      maxRetryWaitSeconds: 60,
      readOnly: false,
      confirm: 'destructive',
      logLevel: 'warn',
      deny: [],
    });
    expect(result.config.allow).toBeUndefined();
  });

  it.each([
    [{ ENGAGE_API_KEY: '' }, /ENGAGE_API_KEY is not set/],
    [{ ENGAGE_BASE_URL: undefined }, /ENGAGE_BASE_URL is not set/],
    [{ ENGAGE_BASE_URL: 'http://api.example.com' }, /must use https/],
    [{ ENGAGE_BASE_URL: 'not a url' }, /not a URL/],
    [{ ENGAGE_BASE_URL: 'https://u:p@api.example.com' }, /no credentials/],
    [{ ENGAGE_AUTH_HEADER: 'basic' }, /ENGAGE_AUTH_HEADER must be one of x-api-key, bearer/],
    [{ ENGAGE_API_KEY: 'eng_live_4C2M1€R€m0123' }, /ENGAGE_API_KEY contains characters beyond ASCII/],
    [{ ENGAGE_API_KEY: 'eng_live_ｆｕｌｌｗｉｄｔｈ' }, /ENGAGE_API_KEY contains characters beyond ASCII/],
    [{ ENGAGE_TIMEOUT_MS: '5s' }, /ENGAGE_TIMEOUT_MS must be a whole number/],
    [{ ENGAGE_CONFIRM: 'sometimes' }, /ENGAGE_CONFIRM must be one of destructive, all, none/],
    [{ ENGAGE_READ_ONLY: 'maybe' }, /ENGAGE_READ_ONLY must be true or false/],
    [{ ENGAGE_OPERATIONS_DENY: 'campain.*' }, /names no domain/],
    [{ ENGAGE_OPERATIONS_DENY: 'campaign.sned' }, /matches no operation of the campaign server/],
    [{ ENGAGE_OPERATIONS_ALLOW: 'campaign send' }, /is not an operationId pattern/],
  ])('reports %j clearly', (override, message) => {
    const result = loadConfig({ ...BASE, ...override }, 'campaign', ids);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems.join(' ')).toMatch(message);
  });

  it('accepts plain http on loopback only, and patterns meant for other servers', () => {
    expect(loadConfig({ ...BASE, ENGAGE_BASE_URL: 'http://127.0.0.1:8080' }, 'campaign', ids).ok).toBe(true);
    expect(loadConfig({ ...BASE, ENGAGE_BASE_URL: 'http://localhost:8080' }, 'campaign', ids).ok).toBe(true);
    expect(loadConfig({ ...BASE, ENGAGE_OPERATIONS_DENY: 'contact.*, *.delete' }, 'campaign', ids).ok).toBe(true);
  });

  it('matches patterns with wildcards', () => {
    expect(matchesPattern('campaign.*', 'campaign.send')).toBe(true);
    expect(matchesPattern('*.delete', 'campaign.delete')).toBe(true);
    expect(matchesPattern('*.delete', 'campaign.deleteAll')).toBe(false);
    expect(matchesPattern('inbox.ticket.*', 'inbox.ticket.reply')).toBe(true);
    expect(matchesPattern('campaign.send', 'campaign.sendX')).toBe(false);
    expect(matchesPattern('c*n*.s*d', 'campaign.send')).toBe(true);
    expect(matchesPattern('*a*a*', 'a')).toBe(false);
    expect(matchesPattern('**', '')).toBe(true);
  });

  it('matches like the obvious definition, on every pattern of a small alphabet', () => {
    // Reference: does some split of the id fit the pieces? (exhaustive, fine for short strings)
    const reference = (pattern: string, id: string): boolean => {
      if (pattern === '') return id === '';
      if (pattern[0] === '*') return [...Array(id.length + 1).keys()].some((skip) => reference(pattern.slice(1), id.slice(skip)));
      return id[0] === pattern[0] && reference(pattern.slice(1), id.slice(1));
    };
    const alphabet = ['a', 'b', '.', '*'];
    const all = (length: number): string[] => (length === 0 ? [''] : all(length - 1).flatMap((prefix) => alphabet.map((char) => prefix + char)));
    const ids = [0, 1, 2, 3, 4].flatMap(all).filter((id) => !id.includes('*'));
    for (const pattern of [0, 1, 2, 3, 4].flatMap(all))
      for (const id of ids) expect(matchesPattern(pattern, id), `${pattern} ~ ${id}`).toBe(reference(pattern, id));
  });

  it('a pattern with many stars is checked at once (no backtracking at start-up)', () => {
    const pattern = `${'*a'.repeat(40)}*z`;
    const result = loadConfig({ ...BASE, ENGAGE_OPERATIONS_DENY: pattern }, 'campaign', ['campaign.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa']);
    expect(result.ok).toBe(true);
    expect(matchesPattern(pattern, `campaign.${'a'.repeat(60)}`)).toBe(false);
  });
});

describe('.env', () => {
  const dir = (text: string) => {
    const path = mkdtempSync(join(tmpdir(), 'engage-env-'));
    writeFileSync(join(path, '.env'), text);
    return path;
  };

  it('cannot set what decides whether operations run without a yes; that is reported, by name only', () => {
    const cwd = dir(
      'ENGAGE_CONFIRM=none\nENGAGE_READ_ONLY=false\nENGAGE_OPERATIONS_ALLOW=*\nENGAGE_OPERATIONS_DENY=\nENGAGE_TIMEOUT_MS=5000\nENGAGE_LOG_LEVEL=error\n',
    );
    const { values, warnings } = loadDotenvSafely({ ENGAGE_API_KEY: 'k', ENGAGE_BASE_URL: 'https://api.example.com' }, cwd);
    expect(values).toEqual({ ENGAGE_TIMEOUT_MS: '5000', ENGAGE_LOG_LEVEL: 'error' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /sets ENGAGE_CONFIRM, ENGAGE_READ_ONLY, ENGAGE_OPERATIONS_ALLOW, ENGAGE_OPERATIONS_DENY, which it may not.*only from the host's environment.*Ignored/,
    );
    expect(warnings[0]).not.toMatch(/none/);
  });

  it("cannot choose where the host's key is sent; with the key in the .env, it can", () => {
    const cwd = dir('ENGAGE_BASE_URL=https://evil.example\n');
    const hostKey = loadDotenvSafely({ ENGAGE_API_KEY: 'k' }, cwd);
    expect(hostKey.values).toEqual({});
    expect(hostKey.warnings.join()).toMatch(/may not choose where that key is sent/);
    const both = loadDotenvSafely({}, dir('ENGAGE_API_KEY=k\nENGAGE_BASE_URL=http://127.0.0.1:8080\n'));
    expect(both).toEqual({ values: { ENGAGE_API_KEY: 'k', ENGAGE_BASE_URL: 'http://127.0.0.1:8080' }, warnings: [] });
  });

  it('may set only its own few ENGAGE_ settings: NODE_TLS_REJECT_UNAUTHORIZED, NODE_OPTIONS and lower-case spellings are reported and ignored', () => {
    const cwd = dir(
      'NODE_TLS_REJECT_UNAUTHORIZED=0\nNODE_OPTIONS=--require ./evil.cjs\nengage_confirm=none\nengage_base_url=https://evil.example\nEngage_Api_Key=x\nENGAGE_LOG_LEVEL=info\n',
    );
    const { values, warnings } = loadDotenvSafely({ ENGAGE_API_KEY: 'k' }, cwd);
    expect(values).toEqual({ ENGAGE_LOG_LEVEL: 'info' });
    expect(warnings.join('\n')).toMatch(/sets engage_confirm, which it may not/);
    expect(warnings.join('\n')).toMatch(
      /sets NODE_TLS_REJECT_UNAUTHORIZED, NODE_OPTIONS, engage_base_url, Engage_Api_Key: a \.env may set only ENGAGE_API_KEY/,
    );
    expect(warnings.join('\n')).not.toMatch(/evil/);
    // A host setting spelled in another case still wins (Windows' environment is case-blind).
    expect(loadDotenvSafely({ engage_log_level: 'warn' }, dir('ENGAGE_LOG_LEVEL=debug\n')).values).toEqual({});
  });

  it("leaves what the host's environment sets alone, and a missing .env is no problem", () => {
    expect(loadDotenvSafely({ ENGAGE_TIMEOUT_MS: '100' }, dir('ENGAGE_TIMEOUT_MS=5000\n')).values).toEqual({});
    expect(loadDotenvSafely({}, mkdtempSync(join(tmpdir(), 'engage-env-')))).toEqual({ values: {}, warnings: [] });
  });
});

describe('retry policy', () => {
  it('parses Retry-After as seconds, tolerating dates and garbage', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('soon', now)).toBe(1);
    expect(parseRetryAfter('-5', now)).toBe(1);
    expect(parseRetryAfter(undefined, now)).toBe(1);
    expect(parseRetryAfter('99999999', now)).toBe(86_400);
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT', now)).toBe(86_400);
  });

  it('holds later calls for at most the cap, whatever Retry-After said', () => {
    let now = 0;
    const pacer = new Pacer(() => now);
    pacer.hold(86_400_000, 60_000);
    expect(pacer.waitEstimateMs()).toBe(60_000);
    now = 60_000;
    expect(pacer.reserve(0)).toBe(0); // the next call after the cap asks the API again
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffDelayMs(0, () => 0)).toBe(125);
    expect(backoffDelayMs(0, () => 1)).toBe(250);
    expect(backoffDelayMs(2, () => 1)).toBe(1000);
    expect(backoffDelayMs(10, () => 1)).toBe(2000);
  });

  it('paces requests one refill interval apart while the bucket is empty', () => {
    let now = 0;
    const pacer = new Pacer(() => now);
    expect(pacer.reserve(60_000)).toBe(0);
    pacer.observe(60, 0, 60); // 60 per minute: one token a second
    expect(pacer.reserve(60_000)).toBe(1000);
    expect(pacer.reserve(60_000)).toBe(2000);
    expect(pacer.reserve(60_000)).toBe(3000);
    expect(pacer.reserve(2_500)).toBeUndefined(); // too far: not taken
    now = 10_000;
    pacer.observe(60, 5, 5);
    expect(pacer.reserve(60_000)).toBe(0);
  });

  it('holds everyone after a 429 until Retry-After has passed', () => {
    let now = 0;
    const pacer = new Pacer(() => now);
    pacer.observe(120, 3, 1);
    pacer.hold(5_000, 60_000);
    expect(pacer.reserve(60_000)).toBe(5_000);
    expect(pacer.reserve(60_000)).toBe(5_500);
    now = 4_000;
    expect(pacer.waitEstimateMs()).toBe(2_000);
  });
});

describe('confirmation tokens and requestStates', () => {
  const secret = new Uint8Array(32).fill(7);
  const make = (now: () => number = Date.now, store = new MemorySpentStore(now)) => new Confirmations({ secret, store, now });

  it('are single use and bound to the operation and exact params', async () => {
    let now = 0;
    const confirmations = make(() => now);
    const { value: token } = confirmations.issue('token', 'key', 'campaign.send', { id: 'a' });
    expect(await confirmations.redeem('token', token, 'key', 'campaign.send', { id: 'a' })).toBe('ok');
    expect(await confirmations.redeem('token', token, 'key', 'campaign.send', { id: 'a' })).toBe('spent');

    const other = confirmations.issue('token', 'key', 'campaign.send', { id: 'a' }).value;
    expect(await confirmations.redeem('token', other, 'key', 'campaign.send', { id: 'b' })).toBe('mismatch');
    expect(await confirmations.redeem('token', other, 'key', 'campaign.send', { id: 'a' })).toBe('spent'); // spent by the mismatch
    const otherOperation = confirmations.issue('token', 'key', 'campaign.send', { id: 'a' }).value;
    expect(await confirmations.redeem('token', otherOperation, 'key', 'campaign.delete', { id: 'a' })).toBe('mismatch');

    const late = confirmations.issue('token', 'key', 'campaign.delete', { id: 'a' }).value;
    now = 5 * 60 * 1000 + 1;
    expect(await confirmations.redeem('token', late, 'key', 'campaign.delete', { id: 'a' })).toBe('expired');
    expect(await confirmations.redeem('token', 'ct_forged', 'key', 'campaign.delete', { id: 'a' })).toBe('unknown');
  });

  it('refuse a tampered value, one from another key or another secret, and one of the other kind', async () => {
    const confirmations = make();
    const { value } = confirmations.issue('state', 'key-1', 'campaign.send', { id: 'a' });
    const [nonce, expiry, authentic, binding, facts] = value.split('.') as [string, string, string, string, string];
    const later = (parseInt(expiry, 36) + 60 * 60 * 1000).toString(36);
    expect(await confirmations.redeem('state', [nonce, later, authentic, binding, facts].join('.'), 'key-1', 'campaign.send', { id: 'a' })).toBe('unknown');
    const otherBinding = binding.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(await confirmations.redeem('state', [nonce, expiry, authentic, otherBinding, facts].join('.'), 'key-1', 'campaign.send', { id: 'a' })).not.toBe(
      'ok',
    );
    expect(await confirmations.redeem('state', value, 'key-2', 'campaign.send', { id: 'a' })).toBe('unknown');
    expect(
      await new Confirmations({ secret: new Uint8Array(32).fill(8), store: new MemorySpentStore() }).redeem('state', value, 'key-1', 'campaign.send', {
        id: 'a',
      }),
    ).toBe('unknown');
    expect(await confirmations.redeem('token', value, 'key-1', 'campaign.send', { id: 'a' })).toBe('unknown');
    // The binding was tampered with above: that spends the genuine nonce too.
    expect(await confirmations.redeem('state', value, 'key-1', 'campaign.send', { id: 'a' })).toBe('spent');
  });

  it("are bound to what the preview's facts showed: other facts, or a value altered there, do not pass", async () => {
    const confirmations = make();
    const shown = "- Campaign: 'Promo' on whatsapp, 40 recipient(s).\n- Message that goes out: 'Halo'";
    const { value } = confirmations.issue('token', 'key', 'campaign.send', { id: 'a' }, Date.now(), shown);
    expect(await confirmations.redeem('token', value, 'key', 'campaign.send', { id: 'a' })).toBe('ok');
    expect(confirmations.showed('token', value, shown)).toBe(true);
    expect(confirmations.showed('token', value, shown.replace('40', '4000'))).toBe(false);
    expect(confirmations.showed('token', value, '')).toBe(false);
    expect(confirmations.showed('state', value, shown)).toBe(false); // the facts' MAC is per kind too
    const altered = value.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(confirmations.showed('token', altered, shown)).toBe(false);
    // A value issued without facts binds the empty facts: an operation whose preview reads nothing.
    const plain = confirmations.issue('token', 'key', 'contact.create', { name: 'x' }).value;
    expect(confirmations.showed('token', plain, '')).toBe(true);
  });

  it('are honoured once by any instance that shares the secret and the spent store', async () => {
    const store = new MemorySpentStore();
    const a = make(Date.now, store);
    const b = make(Date.now, store);
    const { value } = a.issue('token', 'key', 'contact.delete', { id: 'x' });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) => (index % 2 ? a : b).redeem('token', value, 'key', 'contact.delete', { id: 'x' })),
    );
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(1);
  });

  it('treat params in any key order as the same', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe(canonicalJson({ a: [{ c: 3, d: 2 }], b: 1 }));
  });

  it('need a secret of at least 32 bytes', () => {
    expect(() => new Confirmations({ secret: new Uint8Array(16), store: new MemorySpentStore() })).toThrow(/32 bytes/);
  });
});

describe('rendering', () => {
  const records = Array.from({ length: 1000 }, (_, index) => ({
    _id: `id${index}`,
    name: `Name ${index}`,
    city: index % 2 ? 'Bandung' : 'Jakarta',
    tags: ['a'],
  }));

  it('pages, projects and filters, and says what is left', () => {
    const page = shapeList(records, { limit: 10, offset: 20, fields: ['name'] }, '_id');
    expect(page.items).toHaveLength(10);
    expect(page.items[0]).toEqual({ _id: 'id20', name: 'Name 20' });
    expect(page.page).toEqual({ total: 1000, matched: 1000, offset: 20, returned: 10, nextOffset: 30 });

    const filtered = shapeList(records, { search: 'id99 city:bandung' }, '_id');
    expect(filtered.items.map((item) => (item as { _id: string })._id)).toEqual(['id99', 'id991', 'id993', 'id995', 'id997', 'id999']);
    expect(filtered.page.nextOffset).toBeUndefined();

    expect(shapeList(records, { fields: ['nope'] }, '_id').notes.join()).toMatch(/No record has the field\(s\) "nope"/);
  });

  it('cuts a list at a record boundary to fit the budget', () => {
    const big = records.map((record) => ({ ...record, note: 'x'.repeat(500) }));
    const page = shapeList(big, { limit: 500 }, '_id');
    expect(JSON.stringify(page.items).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS / 2);
    expect(page.items.length).toBeLessThan(500);
    expect(page.page.nextOffset).toBe(page.items.length);
    expect(page.notes.join()).toMatch(/Cut to \d+ records/);
  });

  it('replaces a record larger than the budget by a stub with its id, so paging moves on', () => {
    const data = [{ _id: 'a' }, { _id: 'b', blob: 'x'.repeat(100_000) }, { _id: 'c' }];
    const page = shapeList(data, { limit: 1, offset: 1 }, '_id');
    expect(page.items).toEqual([{ _id: 'b', _omitted: expect.stringMatching(/more than one answer can hold/) }]);
    expect(page.page.nextOffset).toBe(2);
  });

  it('fits any value to its budget in linear time: small fields kept, lists cut, texts cut', () => {
    const value = { id: 'x1', status: 'ok', rows: Array.from({ length: 10_000 }, (_, index) => ({ index, text: 'y'.repeat(50) })), note: 'z'.repeat(200_000) };
    for (const budget of [100, 1_000, 10_000, 48_000]) {
      const fitted = fitValue(value, budget) as Record<string, unknown>;
      expect(JSON.stringify(fitted).length, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(fitted.id).toBe('x1');
      expect(fitted.status).toBe('ok');
    }
    expect(fitValue({ a: [1, 2] }, 100)).toEqual({ a: [1, 2] });
    // Nesting 2,000 deep with text at every level: cleaned to 64 levels, then fitted.
    let deep: unknown = null;
    for (let level = 0; level < 2_000; level++) deep = ['t'.repeat(1_000), deep];
    const { data, notes } = fitData(deep);
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS / 2);
    expect(notes.join()).toMatch(/shortened/);
  });

  it('shrinks untyped data that is too large', () => {
    const huge = { summary: 'ok', rows: Array.from({ length: 5000 }, (_, index) => ({ index, text: 'y'.repeat(100) })) };
    const { data, notes } = fitData(huge);
    expect(JSON.stringify(data).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS / 2);
    expect((data as { summary: string }).summary).toBe('ok');
    expect(notes.join()).toMatch(/shortened/);
    expect(fitData({ a: 1 })).toEqual({ data: { a: 1 }, notes: [] });
  });
});

describe('cleaning customer text', () => {
  it('removes invisible, direction and tag characters', () => {
    const hidden = 'Halo\u200b kak\u202e\u2066 \u{E0049}\u{E0067}\u{E006E}ok\ufeff\u00ad\u0007';
    expect(cleanText(hidden)).toBe('Halo kak ok');
    expect(cleanText('baris 1\nbaris 2\tok')).toBe('baris 1\nbaris 2\tok');
  });

  it('removes Hangul fillers, the braille blank and the other default-ignorable characters', () => {
    const fillers = ['\u3164', '\u115F', '\u1160', '\uFFA0', '\u2800', '\u034F', '\u180B', '\u17B4', '\u{1D159}', '\u2064', '\u{E01EF}'];
    expect(cleanText(fillers.map((filler, index) => `${index}${filler}`).join(''))).toBe('012345678910');
  });

  it('cuts nesting deeper than 64 levels, without overflowing the stack', () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    let clean = cleanData(deep);
    let depth = 0;
    while (Array.isArray(clean)) {
      clean = clean[0];
      depth++;
    }
    expect(depth).toBe(64);
    expect(clean).toMatch(/not shown: nested more than 64 levels deep/);
  });

  it('cleans keys and nested values, and keeps __proto__ a plain field', () => {
    const parsed = JSON.parse('{"na\\u200bme":"A\\u200bB","__proto__":{"polluted":true},"list":["x\\u2067y"]}');
    const clean = cleanData(parsed) as Record<string, unknown>;
    expect(clean.name).toBe('AB');
    expect(clean.list).toEqual(['xy']);
    expect(Object.getPrototypeOf(clean)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('redaction', () => {
  const key = 'eng_live_0f1e2d3c4b5a69788796a5b4c3d2e1f00112233';

  it('removes the key and any credential header value from log text', () => {
    const redact = redactor(['eng_live_secret']);
    expect(redact('failed with eng_live_secret in it')).toBe('failed with [redacted] in it');
    expect(redact('authorization: Bearer abc.def')).toBe('authorization: Bearer [redacted]');
    expect(redact('{"x-api-key":"other"}')).toBe('{"x-api-key":"[redacted]"}');
  });

  it.each(Object.entries(keyVariants(key)))('finds the key %s, and leaves the text around it', (_, variant) => {
    const redact = keyRedactor([key]);
    const out = redact(`before ${variant} after`);
    expect(keyScanner(key).find(out)).toBeUndefined();
    expect(out).toMatch(/^before .*\[redacted\].* after$/);
  });

  it('finds a fragment of 16 characters of the secret part anywhere; a cut text loses its last 15 characters, whatever they are', () => {
    const redact = keyRedactor([key]);
    expect(redact(`id ${key.slice(20, 36)} x`)).toBe('id [redacted] x');
    expect(redact(`id ${key.slice(20, 35)} x`)).toBe(`id ${key.slice(20, 35)} x`);
    // The public prefix and a few characters after it are what anyone could write: never taken for the key.
    expect(redact(`starts ${key.slice(0, 20)} x`)).toBe(`starts ${key.slice(0, 20)} x`);
    expect(redact(`starts ${key.slice(0, 25)} x`)).toBe('starts eng_live_[redacted] x');
    // At a cut, the tail goes whether it holds the start of a form or not: a guess learns nothing from it.
    expect(redact(`ends with ${key.slice(0, 15)}`, { cutAtEnd: true })).toBe('ends with ');
    expect(redact(`ends with ${'y'.repeat(15)}`, { cutAtEnd: true })).toBe('ends with ');
    expect(redact(`ends with ${key.slice(0, 15)}`)).toBe(`ends with ${key.slice(0, 15)}`);
  });

  it('finds the shortest fragments written with separators: 8 hex pairs or 16 spaced characters of the secret part', () => {
    const redact = keyRedactor([key]);
    const pairs = Buffer.from(key.slice(9)).toString('hex').match(/../g) as string[];
    expect(redact(`was (${pairs.slice(3, 11).join(':')})`)).toBe('was ([redacted])');
    expect(redact(`was (${pairs.slice(3, 10).join(':')})`)).toBe(`was (${pairs.slice(3, 10).join(':')})`);
    expect(redact(`was (${[...key.slice(12, 28)].join(' ')})`)).toBe('was ([redacted])');
    expect(redact(`was (${[...key.slice(12, 27)].join(' ')})`)).toBe(`was (${[...key.slice(12, 27)].join(' ')})`);
    // The hex of the public prefix and a guessed character or two is no window of the secret part.
    const prefixPairs = Buffer.from(key.slice(0, 11)).toString('hex').match(/../g) as string[];
    expect(redact(`(${prefixPairs.join(', ')})`)).toBe(`(${prefixPairs.join(', ')})`);
    const dates = 'created 2026-08-09T08:00:00.000Z, at 12:30:45, on 24/11/26';
    expect(redact(dates)).toBe(dates);
  });

  it('leaves ordinary text, ids and numbers alone', () => {
    const redact = keyRedactor([key]);
    const text = 'Halo kak, pesanan 64f1a2b3c4d5e6f708192a3b untuk 6281234567890 sudah dikirim. Bearer of good news.';
    expect(redact(text)).toBe(text);
    expect(cleanData({ note: text }, { redact })).toEqual({ note: text });
  });

  it('redacts before any cut: no prefix of the key survives the cut of a long string', () => {
    const scrub = scrubber(keyRedactor([key]));
    const long = `${'a'.repeat(47_990)}${key}${'b'.repeat(10)}`;
    const scrubbed = scrub({ text: long }) as { text: string };
    expect(keyScanner(key).find(scrubbed.text)).toBeUndefined();
    expect(scrubbed.text).toMatch(/…\[cut: \d+ characters in all\]$/);
  });

  it('log lines: the key redacted before the cut, also past the first cut of a huge message', () => {
    const lines: string[] = [];
    const log = createLogger('test', 'debug', [key], (line) => lines.push(line) > 0);
    log.warn(`${'x'.repeat(1_990)}${key}`);
    log.warn(`${'<'.repeat(32_000 - 20)}${key}`);
    log.warn(`split ${[...key].join('\u200b')} and\nnext line`);
    for (const line of lines) {
      expect(keyScanner(key).find(line)).toBeUndefined();
      expect(line.indexOf('\n')).toBe(line.length - 1);
    }
    expect(lines[2]).toContain('split eng_live_[redacted] and\\nnext line');
  });
});

describe('the spent store and the small schema checker', () => {
  it('fails closed when full of unexpired nonces, and makes room once they expire', async () => {
    let now = 0;
    const store = new MemorySpentStore(() => now, 2);
    expect(await store.consume('a', 100)).toBe(true);
    expect(await store.consume('b', 100)).toBe(true);
    await expect(store.consume('c', 100)).rejects.toThrow(/nothing was done/);
    expect(await store.consume('a', 100)).toBe(false);
    now = 101;
    expect(await store.consume('c', 200)).toBe(true);
    expect(await store.consume('a', 200)).toBe(true);
  });

  it("validates our output schemas and the question with the SDK's cf-worker validator (no ajv)", () => {
    const question = jsonSchemaValidator.getValidator({
      type: 'object',
      properties: { confirm: { type: 'boolean' } },
      required: ['confirm'],
      additionalProperties: false,
    } as never);
    expect(question({ confirm: true }).valid).toBe(true);
    expect(question({}).valid).toBe(false);
    expect(question({ confirm: 'true' }).errorMessage).toMatch(/Expected "boolean"/);
    expect(question(JSON.parse('{"confirm": true, "toString": 1, "__proto__": {}}')).errorMessage).toMatch(
      /"toString" does not match.*"__proto__" does not match/,
    );
    const action = jsonSchemaValidator.getValidator(ACTION_OUTPUT_SCHEMA);
    expect(action({ operationId: 'contact.create', outcome: 'done', data: { id: 'c1' } }).valid).toBe(true);
    expect(action({ operationId: 'contact.create', outcome: 'sent' }).valid).toBe(false);
    expect(jsonSchemaValidator.getValidator(READ_OUTPUT_SCHEMA)({ operationId: 'contact.list' }).valid).toBe(false);
  });
});

describe('the stdio line limit', () => {
  it('drops a line over the limit whole, no prefix of it, and passes the rest whole', async () => {
    const dropped: number[] = [];
    const limit = new LineLimit(10, (bytes) => dropped.push(bytes));
    const out: Buffer[] = [];
    limit.on('data', (chunk: Buffer) => out.push(chunk));
    for (const piece of ['{"a":1}\n{"long":"', 'xxxxxxxxxxxxxxxx', 'yy"}\n{"b":2}', '\n']) limit.write(Buffer.from(piece));
    limit.end();
    await new Promise((resolve) => limit.on('end', resolve));
    const lines = Buffer.concat(out).toString('utf8').split('\n');
    expect(lines[0]).toBe('{"a":1}');
    expect(lines.filter((line) => line.includes('long') || line.includes('x'))).toEqual([]);
    expect(lines).toContain('{"b":2}');
    expect(dropped).toEqual([10]);
  });
});
