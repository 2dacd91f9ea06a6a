// Unit tests of the core's subtle logic: configuration, retry and pacing policy, tokens,
// rendering, cleaning and redaction.
import { describe, expect, it } from 'vitest';
import { loadConfig, matchesPattern, redactor } from '@engage-mcp/shared';
import { Confirmations, MemorySpentStore, canonicalJson } from '../shared/src/confirm.js';
import { Pacer, backoffDelayMs, parseRetryAfter } from '../shared/src/pacing.js';
import { MAX_ANSWER_CHARS, fitData, shapeList } from '../shared/src/render.js';
import { cleanData, cleanText } from '../shared/src/sanitize.js';

const BASE = { ENGAGE_API_KEY: 'eng_live_secret', ENGAGE_BASE_URL: 'https://api.example.com' };
const ids = ['campaign.list', 'campaign.send', 'campaign.delete'];

describe('configuration', () => {
  it('reads every variable with its default', () => {
    const result = loadConfig(BASE, 'campaign', ids);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.config).toMatchObject({ authHeader: 'x-api-key', timeoutMs: 30_000, maxRetryWaitSeconds: 60, readOnly: false, confirm: 'destructive', logLevel: 'warn', deny: [] });
    expect(result.config.allow).toBeUndefined();
  });

  it.each([
    [{ ENGAGE_API_KEY: '' }, /ENGAGE_API_KEY is not set/],
    [{ ENGAGE_BASE_URL: undefined }, /ENGAGE_BASE_URL is not set/],
    [{ ENGAGE_BASE_URL: 'http://api.example.com' }, /must use https/],
    [{ ENGAGE_BASE_URL: 'not a url' }, /not a URL/],
    [{ ENGAGE_BASE_URL: 'https://u:p@api.example.com' }, /no credentials/],
    [{ ENGAGE_AUTH_HEADER: 'basic' }, /ENGAGE_AUTH_HEADER must be one of x-api-key, bearer/],
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
    pacer.holdUntil(5_000);
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
    const [nonce, expiry, authentic, binding] = value.split('.') as [string, string, string, string];
    const later = (parseInt(expiry, 36) + 60 * 60 * 1000).toString(36);
    expect(await confirmations.redeem('state', [nonce, later, authentic, binding].join('.'), 'key-1', 'campaign.send', { id: 'a' })).toBe('unknown');
    expect(await confirmations.redeem('state', value.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), 'key-1', 'campaign.send', { id: 'a' })).not.toBe('ok');
    expect(await confirmations.redeem('state', value, 'key-2', 'campaign.send', { id: 'a' })).toBe('unknown');
    expect(await new Confirmations({ secret: new Uint8Array(32).fill(8), store: new MemorySpentStore() }).redeem('state', value, 'key-1', 'campaign.send', { id: 'a' })).toBe('unknown');
    expect(await confirmations.redeem('token', value, 'key-1', 'campaign.send', { id: 'a' })).toBe('unknown');
    // The binding was tampered with above: that spends the genuine nonce too.
    expect(await confirmations.redeem('state', value, 'key-1', 'campaign.send', { id: 'a' })).toBe('spent');
  });

  it('are honoured once by any instance that shares the secret and the spent store', async () => {
    const store = new MemorySpentStore();
    const a = make(Date.now, store);
    const b = make(Date.now, store);
    const { value } = a.issue('token', 'key', 'contact.delete', { id: 'x' });
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 ? a : b).redeem('token', value, 'key', 'contact.delete', { id: 'x' })));
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
  const records = Array.from({ length: 1000 }, (_, index) => ({ _id: `id${index}`, name: `Name ${index}`, city: index % 2 ? 'Bandung' : 'Jakarta', tags: ['a'] }));

  it('pages, projects and filters, and says what is left', () => {
    const page = shapeList(records, { limit: 10, offset: 20, fields: ['name'] }, '_id');
    expect(page.items).toHaveLength(10);
    expect(page.items[0]).toEqual({ _id: 'id20', name: 'Name 20' });
    expect(page.page).toEqual({ total: 1000, matched: 1000, offset: 20, returned: 10, nextOffset: 30 });

    const filtered = shapeList(records, { search: 'id99 city:bandung' }, '_id');
    expect(filtered.items.map((item) => (item as { _id: string })._id)).toEqual(['id99', 'id991', 'id993', 'id995', 'id997', 'id999']);
    expect(filtered.page.nextOffset).toBeUndefined();

    expect(shapeList(records, { fields: ['nope'] }, '_id').notes.join()).toMatch(/No record has the field\(s\) nope/);
  });

  it('cuts a list at a record boundary to fit the budget', () => {
    const big = records.map((record) => ({ ...record, note: 'x'.repeat(500) }));
    const page = shapeList(big, { limit: 500 }, '_id');
    expect(JSON.stringify(page.items).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS / 2);
    expect(page.items.length).toBeLessThan(500);
    expect(page.page.nextOffset).toBe(page.items.length);
    expect(page.notes.join()).toMatch(/Cut to \d+ records/);
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
  it('removes the key and any credential header value from log text', () => {
    const redact = redactor(['eng_live_secret']);
    expect(redact('failed with eng_live_secret in it')).toBe('failed with [redacted] in it');
    expect(redact('authorization: Bearer abc.def')).toBe('authorization: Bearer [redacted]');
    expect(redact('{"x-api-key":"other"}')).toBe('{"x-api-key":"[redacted]"}');
  });
});
