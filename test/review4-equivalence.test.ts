// The performance work of c1b6274 and 0f0a4cc must change nothing the model sees. Differential and
// invariant checks over seeded random inputs: the key redactor against its frozen form from before
// (review4-redact-reference.ts: hash modulo a prime, every run with separators read), cleanText
// against the Unicode class it skips for ASCII, cleanData against its form without the field-name
// cache, and a read's answer: the structured content's length kept for the size check is its JSON
// length, the text's lines are the records' JSON, and the whole stays under MAX_ANSWER_CHARS.
// Also scrub's JSON shortcut (render.ts: one scan of a record's JSON in place of cleaning and
// redacting each of its strings) against scrubbing every record.
import { describe, expect, it } from 'vitest';
import { finishAnswer, knownStructuredLength, readAnswer } from '../shared/src/call/answers.js';
import { keyRedactor } from '../shared/src/safe/redact.js';
import { fitData, MAX_ANSWER_CHARS, scrubber, type Scrub } from '../shared/src/safe/render.js';
import { cleanData, cleanText, isHiddenCodePoint, plainJson, setField, TOO_DEEP, TOO_MUCH, MAX_DEPTH, type CleanOptions } from '../shared/src/safe/sanitize.js';
import { StreamedList } from '../shared/src/upstream/stream-list.js';
import { DOMAINS } from './helpers.js';
import { keyRedactor as referenceRedactor } from './review4-redact-reference.js';

function random(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x100000000;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T;
  return { next, int, pick };
}
type Random = ReturnType<typeof random>;

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function randomKey(r: Random): string {
  const length = r.pick([4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 20, 24, 32, 40, 64]);
  const pool = r.pick([ALNUM, '0123456789abcdef', `${ALNUM}-_.`, '0123456789', 'abcdefghijklmnopqrstuvwxyz']);
  let key = r.pick(['', '', 'sk_live_', 'eng_']);
  while (key.length < length) key += pool[r.int(pool.length)];
  return key;
}

function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let value = 0;
  let bits = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    for (; bits >= 5; bits -= 5) out += alphabet[(value >>> (bits - 5)) & 31];
  }
  return bits > 0 ? out + alphabet[(value << (5 - bits)) & 31] : out;
}
const rot13 = (text: string) =>
  text.replace(/[a-z]/gi, (char) => {
    const base = char <= 'Z' ? 0x41 : 0x61;
    return String.fromCharCode(((char.charCodeAt(0) - base + 13) % 26) + base);
  });
const fullWidth = (text: string) => [...text].map((char) => (char > ' ' && char <= '~' ? String.fromCharCode(char.charCodeAt(0) + 0xfee0) : char)).join('');
const mathBold = (text: string) =>
  [...text]
    .map((char) => {
      if (char >= 'A' && char <= 'Z') return String.fromCodePoint(0x1d400 + char.charCodeAt(0) - 65);
      if (char >= 'a' && char <= 'z') return String.fromCodePoint(0x1d41a + char.charCodeAt(0) - 97);
      if (char >= '0' && char <= '9') return String.fromCodePoint(0x1d7ce + char.charCodeAt(0) - 48);
      return char;
    })
    .join('');
const INVISIBLE = ['\u200b', '\u2060', '\u00ad', '\ufeff', '\u{e0020}', '\u200d', '\u0007', '\u001b'];
const MARKS = ['\u0301', '\u0308', '\u0327', '\u20d7'];
const BLANKS = [' ', '\t', '\u00a0', '\u2009', '\u3000', '\u202f'];
const SEPARATORS = [':', '-', ' ', ', ', '.', '_', '/', '|', '\t'];

/** The key in one of the forms the redactor promises to find (redact.ts's header). */
function keyForm(r: Random, key: string): string {
  const bytes = Buffer.from(key);
  const hex = (byte: number) => byte.toString(16).padStart(2, '0');
  switch (r.int(19)) {
    case 0:
      return key;
    case 1:
      return [...key].map((char) => (r.next() < 0.5 ? char.toUpperCase() : char.toLowerCase())).join('');
    case 2:
      return [...key].map((char) => (r.next() < 0.6 ? `%${hex(char.charCodeAt(0)).toUpperCase()}` : char)).join('');
    case 3:
      return [...key].map((char) => (r.next() < 0.6 ? `\\x${hex(char.charCodeAt(0))}` : char)).join('');
    case 4:
      return [...key].map((char) => (r.next() < 0.6 ? `\\u00${hex(char.charCodeAt(0))}` : char)).join('');
    case 5:
      return r.next() < 0.5 ? bytes.toString('hex') : bytes.toString('hex').toUpperCase();
    case 6: {
      const prefix = r.next() < 0.3 ? '0x' : '';
      return [...bytes].map((byte) => prefix + (r.next() < 0.5 ? hex(byte) : hex(byte).toUpperCase())).join(r.pick(SEPARATORS));
    }
    case 7: {
      const before = Buffer.from([r.int(256), r.int(256)].slice(0, r.int(3)));
      return Buffer.concat([before, bytes, Buffer.from([r.int(256)])]).toString(r.next() < 0.5 ? 'base64' : 'base64url');
    }
    case 8: {
      const before = Buffer.from(Array.from({ length: r.int(5) }, () => r.int(256)));
      return base32(Buffer.concat([before, bytes, Buffer.from([r.int(256)])]));
    }
    case 9:
      return rot13(key);
    case 10:
      return [...key].reverse().join('');
    case 11:
      return [...key].join(r.pick(BLANKS));
    case 12:
      return fullWidth(key);
    case 13:
      return mathBold(key);
    case 14:
      return [...key].map((char) => char + (r.next() < 0.5 ? r.pick(MARKS) : '')).join('');
    case 15:
      return [...key].map((char) => char + (r.next() < 0.3 ? r.pick(INVISIBLE) : '')).join('');
    case 16:
      return [...fullWidth(key)].join(r.pick(BLANKS));
    case 17:
      return [...mathBold(key)].join(r.pick(BLANKS));
    default:
      return [...key].map((char) => (r.next() < 0.3 ? fullWidth(char) : r.next() < 0.3 ? mathBold(char) : char)).join('');
  }
}

const NOISE = [
  'abcdef0123456789',
  ALNUM,
  ' \t\n-:,._/|',
  'éßπ中文😀\u{1d400}\u{1f600}\ud800\udc00\udfff\ud83d',
  '%\\xu',
  '\u200b\u0301\uff21\uff10\u3000\u00a0',
];
const SNIPPETS = ['2026-08-09T08:00:00.000Z', '12:30:45', '24/11/26', 'de:ad:be:ef', '0x1f 0x2e', 'a b c d e f', 'Halo kak ', '\\u0041', '%41%42'];
function noise(r: Random, length: number): string {
  let out = '';
  while (out.length < length) {
    if (r.next() < 0.1) out += r.pick(SNIPPETS);
    else out += r.pick([...r.pick(NOISE)]);
  }
  return out;
}

/** Noise with whole forms and fragments of forms (any length, from anywhere in the form) of one of `keys`. */
function textWithForms(r: Random, keys: string[], pieces: number): { text: string; cutAtEnd: boolean } {
  const parts: string[] = [];
  for (let piece = 0; piece < pieces; piece++) {
    parts.push(noise(r, r.int(r.next() < 0.2 ? 60 : 10)));
    const units = [...keyForm(r, r.pick(keys))];
    const length = r.next() < 0.3 ? units.length : Math.min(units.length, 1 + r.int(Math.min(units.length, 30)));
    const start = r.int(units.length - length + 1);
    parts.push(units.slice(start, start + length).join(''));
  }
  const cutAtEnd = r.next() < 0.4;
  if (!cutAtEnd || r.next() < 0.5) parts.push(noise(r, r.int(6)));
  return { text: parts.join(''), cutAtEnd };
}

describe('the redactor gives exactly what it gave before c1b6274', () => {
  it('on texts holding whole forms and fragments of every promised form, cut or not', () => {
    const r = random(20261124);
    let redacted = 0;
    for (let round = 0; round < 60; round++) {
      const keys = Array.from({ length: r.next() < 0.2 ? 2 : 1 }, () => randomKey(r));
      const now = keyRedactor(keys);
      const reference = referenceRedactor(keys);
      for (let index = 0; index < 150; index++) {
        const { text, cutAtEnd } = textWithForms(r, keys, 1 + r.int(4));
        const expected = reference(text, { cutAtEnd });
        if (expected !== text) redacted++;
        expect(now(text, { cutAtEnd }), JSON.stringify({ keys, text, cutAtEnd })).toBe(expected);
      }
    }
    // The texts exercise the redactor: most hold something it redacts.
    expect(redacted).toBeGreaterThan(4_000);
  });

  it('on long texts (past the shared skeleton buffer) with many forms', () => {
    const r = random(7);
    for (let round = 0; round < 12; round++) {
      const keys = [randomKey(r)];
      const { text, cutAtEnd } = textWithForms(r, keys, 300);
      expect(text.length).toBeGreaterThan(4096);
      expect(keyRedactor(keys)(text, { cutAtEnd })).toBe(referenceRedactor(keys)(text, { cutAtEnd }));
    }
  });

  it('on every fragment of a form written with separators, around the shortest run that is read', () => {
    let compared = 0;
    for (const length of [4, 5, 7, 8, 9, 12, 13, 15, 16, 17]) {
      for (const alphabet of ['Ab3dEf7hIj9kLmNoPq2s', '0123456789abcdef0123']) {
        const key = alphabet.slice(0, length);
        const now = keyRedactor([key]);
        const reference = referenceRedactor([key]);
        const pairs = Buffer.from(key).toString('hex').match(/../g) as string[];
        const forms: Array<[string[], string]> = [
          [pairs, ':'],
          [pairs.map((pair) => `0x${pair}`), ', '],
          [pairs, '-'],
          [[...key], ' '],
          [[...key], '\u3000'],
          [[...mathBold(key)], ' '],
          [[...key].reverse(), '\t'],
        ];
        for (const [units, separator] of forms) {
          for (let start = 0; start < units.length; start++) {
            for (let end = start + 3; end <= Math.min(units.length, start + 14); end++) {
              const fragment = units.slice(start, end).join(separator);
              for (const [head, tail, cutAtEnd] of [
                ['was (', ')', false],
                ['ends ', '', true],
                ['ends (', ')', true],
                ['ab:', ':cd', false],
              ] as const) {
                const text = `${head}${fragment}${tail}`;
                expect(now(text, { cutAtEnd }), JSON.stringify({ key, text, cutAtEnd })).toBe(reference(text, { cutAtEnd }));
                compared++;
              }
            }
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(10_000);
  });
});

describe('cleaning gives exactly what it gave before c1b6274', () => {
  /** cleanText as the Unicode class alone reads it, code point by code point. */
  const referenceCleanText = (text: string) =>
    Array.from(text)
      .filter((char) => !isHiddenCodePoint(char.codePointAt(0) as number))
      .join('');

  it('cleanText: every BMP character, and strings of tabs, CR, DEL, C1 controls, tags, lone surrogates', () => {
    for (let code = 0; code < 0x10000; code++) {
      const text = `ab${String.fromCharCode(code)}cd`;
      expect(cleanText(text), `U+${code.toString(16)}`).toBe(referenceCleanText(text));
    }
    const r = random(3);
    const pieces = [
      '\r',
      '\x7f',
      '\x80',
      '\x85',
      '\x9f',
      '\u200b',
      '\t',
      '\n',
      '\x00',
      '\x1b',
      'a',
      ' ',
      '~',
      '\u2028',
      '\ud800',
      '\udc00',
      '\u{e0041}',
      'é',
      '\ufeff',
      '\u{1d159}',
    ];
    for (let index = 0; index < 5_000; index++) {
      const text = Array.from({ length: r.int(8) }, () => r.pick(pieces)).join('');
      expect(cleanText(text), JSON.stringify(text)).toBe(referenceCleanText(text));
    }
  });

  /** cleanData as it was before the field-name cache: each key cleaned (and charged) on its own. */
  function referenceCleanData(value: unknown, options: CleanOptions = {}): unknown {
    const { redact = (text: string) => text, maxStringChars = Number.POSITIVE_INFINITY } = options;
    let budget = options.maxTotalChars ?? Number.POSITIVE_INFINITY;
    const text = (raw: string): string => {
      if (budget <= 0) return TOO_MUCH;
      const cut = raw.length > maxStringChars;
      budget -= cut ? maxStringChars : raw.length;
      const clean = redact(cleanText(cut ? raw.slice(0, maxStringChars) : raw), { cutAtEnd: cut });
      return cut ? `${clean}…[cut: ${raw.length} characters in all]` : clean;
    };
    const visit = (node: unknown, depth: number): unknown => {
      if (typeof node === 'string') return text(node);
      if (typeof node === 'number') {
        if (!options.redact) return node;
        const shown = options.redact(String(node));
        return shown === String(node) ? node : shown;
      }
      if (node === null || typeof node !== 'object') return node;
      if (depth >= MAX_DEPTH) return TOO_DEEP;
      if (Array.isArray(node)) return node.map((inner) => visit(inner, depth + 1));
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(node)) setField(out, text(key), visit(inner, depth + 1));
      return out;
    };
    return visit(value, 0);
  }

  /** JSON that also tells own "__proto__" fields from prototypes. */
  const shape = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(shape);
    return [
      Object.getPrototypeOf(value) === Object.prototype,
      ...Object.getOwnPropertyNames(value).map((key) => [key, shape((value as Record<string, unknown>)[key])]),
    ];
  };

  it('cleanData: records sharing field names (with key forms, hidden characters, __proto__, cut names), under every budget', () => {
    const r = random(11);
    for (let round = 0; round < 400; round++) {
      const keys = [randomKey(r)];
      const redact = r.next() < 0.8 ? keyRedactor(keys) : undefined;
      const names = Array.from({ length: 1 + r.int(r.next() < 0.05 ? 1_200 : 8) }, () => {
        const kind = r.int(6);
        if (kind === 0) return '__proto__';
        if (kind === 1) return textWithForms(r, keys, 1).text;
        if (kind === 2) return 'n'.repeat(r.int(40));
        return noise(r, r.int(8)) + r.pick(['\r', '\x7f', '\x85', '\u200b', 'a', '']);
      });
      const record = (depth: number): unknown => {
        const kind = r.int(10);
        if (depth > 3 || kind < 3) return r.next() < 0.5 ? textWithForms(r, keys, 1).text : r.pick([1, 0, -1, 123456789012, 3.5, null, true]);
        if (kind < 5) return Array.from({ length: r.int(4) }, () => record(depth + 1));
        return Object.fromEntries(Array.from({ length: r.int(6) }, () => [r.pick(names), record(depth + 1)]));
      };
      // Through JSON, as the API's data comes: "__proto__" is then an own field.
      const data = JSON.parse(JSON.stringify(Array.from({ length: 1 + r.int(25) }, () => record(0))));
      const options: CleanOptions = {
        ...(redact ? { redact } : {}),
        ...(r.next() < 0.7 ? { maxStringChars: r.pick([0, 1, 5, 8, 12, 20, 100]) } : {}),
        ...(r.next() < 0.7 ? { maxTotalChars: r.pick([0, 1, 10, 50, 100, 300, 1_000, 5_000]) } : {}),
      };
      expect(shape(cleanData(data, options))).toEqual(shape(referenceCleanData(data, options)));
    }
  });
});

describe("a read's answer: the kept length, the text and the size cap", () => {
  const ops = Object.values(DOMAINS)
    .flatMap((domain) => domain.operations)
    .filter((op) => op.list && op.risk === 'safe');
  const size = (result: ReturnType<typeof finishAnswer>) =>
    result.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0) + JSON.stringify(result.structuredContent ?? null).length;

  it('as a list and streamed, with key forms in records, notes and field names, huge records, and huge asked-for fields', () => {
    const r = random(5);
    for (let round = 0; round < 120; round++) {
      const keys = [randomKey(r)];
      const redact = keyRedactor(keys);
      const op = r.pick(ops);
      const many = r.next() < 0.2;
      const data = Array.from({ length: r.int(many ? 400 : 30) }, (_, index) => {
        const kind = r.int(20);
        if (kind === 0) return textWithForms(r, keys, 1).text;
        if (kind === 1) return index;
        if (kind === 2) return null;
        const item: Record<string, unknown> = { _id: `c${index}`, id: index, name: textWithForms(r, keys, 1).text };
        if (r.next() < 0.05) item.huge = 'x'.repeat(r.pick([20_000, 47_990, 48_000, 60_000]));
        if (r.next() < 0.3) item.tags = [textWithForms(r, keys, 1).text, 'a'];
        if (r.next() < 0.1) item[textWithForms(r, keys, 1).text] = 'a field named with a key form';
        if (many) item.pad = 'y'.repeat(r.int(400));
        return item;
      });
      const args: { limit?: number; offset?: number; fields?: string[]; search?: string } = {};
      if (r.next() < 0.5) args.limit = r.pick([1, 5, 50, 500]);
      if (r.next() < 0.3) args.offset = r.int(40);
      if (r.next() < 0.3)
        args.fields = r.pick([
          ['name'],
          ['huge'],
          ['nope'],
          [keys[0] as string],
          [`x${keys[0]}`],
          Array.from({ length: 200 }, (_, index) => `f${index}${'z'.repeat(500)}`),
        ]);
      if (r.next() < 0.2) args.search = r.pick(['c1', 'a', keys[0] as string, 'redacted']);
      const caller = { scrub: scrubber(redact), redact };
      const listed = readAnswer(op, data, args, caller);
      const streamed = new StreamedList(args, op.list?.idField, redact);
      for (const item of data) streamed.add(JSON.stringify(item));
      streamed.flush();
      const fromStream = readAnswer(op, streamed, args, caller);
      expect(fromStream).toEqual(listed);
      for (const answer of [listed, fromStream]) {
        const known = knownStructuredLength(answer);
        if (known !== undefined) expect(known).toBe(JSON.stringify(answer.structuredContent).length);
        const lines = (answer.content[0] as { text: string }).text.split('\n');
        for (const item of (answer.structuredContent as { data: unknown[] }).data) expect(lines).toContain(JSON.stringify(item));
        const finished = finishAnswer(answer, redact);
        expect(size(finished)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
        expect(JSON.stringify(finished)).not.toContain(keys[0]);
      }
    }
  });
});

describe("scrub's JSON shortcut gives exactly what scrubbing every record gives", () => {
  const listOps = Object.values(DOMAINS)
    .flatMap((domain) => domain.operations)
    .filter((op) => op.list && op.risk === 'safe');
  const ASCII_NOISE = ['abcdef0123456789', ALNUM, ' -:,._/|{}[]', '"', '2026-08-09T08:00:00.000Z', 'de:ad:be:ef', '0x1f 0x2e', 'a b c d e f'];
  const asciiText = (r: Random, keys: string[]): string => {
    const parts = Array.from({ length: 1 + r.int(3) }, () => r.pick(ASCII_NOISE).slice(0, 1 + r.int(30)));
    if (r.next() < 0.3) {
      // A whole or partial form of the key that stays ASCII (the key, mixed case, %XX, hex, hex with separators, base64, base32, ROT13, reversed, spaced).
      const form = keyForm(r, r.pick(keys));
      if (/^[\x20-\x7e]*$/.test(form)) parts.push(r.next() < 0.5 ? form : form.slice(r.int(form.length)));
    }
    return parts.join(r.pick(['', ' ', ',']));
  };
  const value = (r: Random, keys: string[], depth: number): unknown => {
    const kind = r.int(12);
    if (kind === 0 && /^[0-9]{1,15}$/.test(keys[0] as string)) return Number(keys[0]);
    if (depth > 4 || kind < 6) return r.next() < 0.7 ? asciiText(r, keys) : r.pick([0, -1, 3.5, 1e21, 123456789012, true, false, null]);
    if (kind < 8) return Array.from({ length: r.int(4) }, () => value(r, keys, depth + 1));
    if (kind === 8) return r.next() < 0.5 ? textWithForms(r, keys, 1).text : 'x'.repeat(r.pick([47_990, 48_000, 60_000]));
    return Object.fromEntries(
      Array.from({ length: r.int(5) }, () => [r.pick(['name', '__proto__', asciiText(r, keys), 'a{b}', 'c:d']), value(r, keys, depth + 1)]),
    );
  };
  const nested = (levels: number, inner: unknown): unknown => (levels === 0 ? inner : r2(levels, inner));
  const r2 = (levels: number, inner: unknown): unknown => (levels % 2 ? [nested(levels - 1, inner)] : { n: nested(levels - 1, inner) });
  const keyWithPunctuation = (r: Random) => `${randomKey(r)}${r.pick(['"', ',', ':', '[', ']', '{', '}'])}${randomKey(r)}`.padEnd(12, 'q');

  it('on lists of ASCII records holding key forms, key digits as numbers, JSON punctuation in strings, __proto__, long strings and deep nesting', () => {
    const r = random(424242);
    let shortcuts = 0;
    let scrubbed = 0;
    for (let round = 0; round < 300; round++) {
      const keys = [r.next() < 0.1 ? keyWithPunctuation(r) : randomKey(r)];
      const redact = keyRedactor(keys);
      const fast = scrubber(redact);
      const leaves = fast.leaves as (json: string) => boolean;
      fast.leaves = (json) => {
        const left = leaves(json);
        if (left) shortcuts++;
        else scrubbed++;
        return left;
      };
      const slow: Scrub = (data) => fast(data);
      const records = Array.from({ length: 1 + r.int(25) }, (_, index) => {
        const record: Record<string, unknown> = { _id: `c${index}` };
        for (let field = 0; field < 1 + r.int(6); field++) record[r.pick(['name', 'email', 'tags', 'note', '__proto__', 'n'])] = value(r, keys, 0);
        if (r.next() < 0.05) record.deep = nested(MAX_DEPTH - 3 + r.int(5), asciiText(r, keys));
        return record;
      });
      const data = JSON.parse(JSON.stringify(records));
      const op = r.pick(listOps);
      const args = { ...(r.next() < 0.3 ? { fields: ['name', 'deep', '__proto__'] } : {}), ...(r.next() < 0.5 ? { limit: r.pick([5, 50]) } : {}) };
      const viaShortcut = readAnswer(op, data, args, { scrub: fast, redact });
      const viaScrub = readAnswer(op, data, args, { scrub: slow, redact });
      expect(JSON.stringify(viaShortcut)).toBe(JSON.stringify(viaScrub));
      expect(viaShortcut).toEqual(viaScrub);
      const single = data[0];
      expect(JSON.stringify(fitData(single, { scrub: fast }))).toBe(JSON.stringify(fitData(single, { scrub: slow })));
      if (keys[0] !== undefined && /[",:[\]{}]/.test(keys[0])) expect(redact.clearsJson?.('{"a":"b"}')).toBe(false);
    }
    // Both ways were taken, often.
    expect(shortcuts).toBeGreaterThan(300);
    expect(scrubbed).toBeGreaterThan(300);
  });

  it('plainJson: printable ASCII, no escape, nested no deeper than cleanData shows (brackets inside strings do not count)', () => {
    const deep = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
    expect(plainJson(deep(MAX_DEPTH))).toBe(true);
    expect(plainJson(deep(MAX_DEPTH + 1))).toBe(false);
    expect(plainJson(JSON.stringify({ a: '[[[[{{{{'.repeat(40), b: [1, { c: 'd' }] }))).toBe(true);
    expect(plainJson(JSON.stringify({ a: 'tab\there' }))).toBe(false);
    expect(plainJson(JSON.stringify({ a: 'quote " here' }))).toBe(false);
    expect(plainJson(JSON.stringify({ a: 'é' }))).toBe(false);
    expect(plainJson(JSON.stringify({ a: '\u200b' }))).toBe(false);
    // cleanData's own limit is what plainJson stands for.
    expect(cleanData(JSON.parse(deep(MAX_DEPTH)))).toEqual(JSON.parse(deep(MAX_DEPTH)));
    expect(JSON.stringify(cleanData(JSON.parse(deep(MAX_DEPTH + 1))))).toContain(TOO_DEEP);
  });

  it("finds a key form in any one string, key or number of a record's JSON, and never reads a form across JSON's punctuation as clear", () => {
    const key = 'eng_live_4f9c2a7b1d3e5f60';
    const redact = keyRedactor([key]);
    const clears = redact.clearsJson as (json: string) => boolean;
    const hex = Buffer.from(key).toString('hex');
    for (const record of [
      { a: key },
      { [key]: 1 },
      { a: ['x', hex] },
      { a: hex.match(/../g)?.join(':') },
      { a: [...key].join(' ') },
      { a: key.toUpperCase() },
    ]) {
      expect(clears(JSON.stringify(record))).toBe(false);
    }
    // Two runs shorter than a redacted one, beside each other in the JSON, are not read as one.
    expect(clears(JSON.stringify({ a: 'eng_live_4f', b: '9c2a7b1d3e' }))).toBe(true);
    expect(clears(JSON.stringify(['eng_live_4f', '9c2a7b1d3e']))).toBe(true);
    const digits = keyRedactor(['4815162342108']);
    expect(digits.clearsJson?.(JSON.stringify({ n: 4815162342108 }))).toBe(false);
    expect(digits.clearsJson?.(JSON.stringify({ n: 4815162 }))).toBe(true);
  });

  it('clearsJson says exactly whether redacting the whole text changes it, by its plain-ASCII scan or the full one', () => {
    const r = random(77001);
    const seen = { plainClear: 0, plainFound: 0, other: 0 };
    for (let round = 0; round < 120; round++) {
      const keys = Array.from({ length: r.next() < 0.2 ? 2 : 1 }, () => randomKey(r));
      const redact = keyRedactor(keys);
      const clears = redact.clearsJson as (json: string) => boolean;
      const punctuated = keys.some((key) => /[",:[\]{}]/.test(key));
      for (let index = 0; index < 40; index++) {
        const plain = r.next() < 0.6;
        const text = plain
          ? Array.from({ length: 1 + r.int(4) }, () => (r.next() < 0.5 ? asciiText(r, keys) : JSON.stringify({ a: asciiText(r, keys), n: r.int(1e9) }))).join(
              '',
            )
          : textWithForms(r, keys, 1 + r.int(3)).text;
        const unchanged = redact(text) === text;
        expect(clears(text)).toBe(punctuated ? false : unchanged);
        if (!/^[\x20-\x7e]*$/.test(text) || /[%\\]/.test(text)) seen.other++;
        else if (unchanged) seen.plainClear++;
        else seen.plainFound++;
      }
    }
    // A key with a blank (no configured key has one, but the redactor takes any): a form at the very end is found.
    const spaced = keyRedactor(['abc def 0123456789']);
    expect(spaced('x abc def 0123456789')).not.toBe('x abc def 0123456789');
    expect(spaced.clearsJson?.('x abc def 0123456789')).toBe(false);
    // The plain scan both cleared texts and found forms, and the full scan was asked too.
    expect(seen.plainClear).toBeGreaterThan(500);
    expect(seen.plainFound).toBeGreaterThan(200);
    expect(seen.other).toBeGreaterThan(500);
  });
});
