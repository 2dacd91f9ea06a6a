// The key must never reach the model or a log, whatever the API echoes back. A hostile or buggy
// API can return the key as it is, in other letter case, URL-encoded or \xNN / \u00NN escaped, hex
// (also with separators between the pairs), base64 (in any of the three byte alignments), base32
// (any of five), ROT13 or reversed, spaced out (one blank between characters), in full-width,
// mathematical or other compatibility letters, with combining marks on its characters, or with
// invisible characters between them. Every such form is found, and so is any run of MIN_RUN or
// more characters of a form of the key's secret part (the key without a public prefix such as
// `eng_live_`), so a fragment the API left is caught too. Redaction runs after invisible
// characters are cleaned and before anything is cut; where a text had to be cut first (a huge
// log message), its last MIN_RUN - 1 characters are dropped, whatever they are. Every pass is
// linear in the text's length.
//
// What is redacted must never tell a model that guesses at the key which guess was right (text it
// wrote, or that it had the API or this server join or rewrite, comes back redacted or not): so
// nothing shorter than a window of the secret part, which no one can write without knowing at
// least 8 of its characters (a window of its hex form; 16 of the key itself), is ever redacted,
// and a cut never depends on what the text ends with.
import { hiddenBmpTable, isHiddenCodePoint } from './sanitize.js';

export const REDACTED = '[redacted]';
/**
 * The shortest run of a form of the key's secret part that is redacted: long enough that ids and
 * words never match by chance, and that a guess at it (8 characters of a hex key for a window of
 * its hex form, 32 bits; more for the other forms) cannot be confirmed by trying.
 */
const MIN_RUN = 16;
/** Keys shorter than this are not treated as secrets (they would match ordinary text). */
const MIN_SECRET = 4;
const HASH_BASE = 257;
/** Windows' hashes are looked up only where this many low bits match one of the forms' (most text matches none). */
const FILTER_BITS = 16;
/** A skeleton character that matches no form (non-ASCII text). */
const NO_MATCH = 0xffff;
/** What a character folds to when it is dropped from the skeleton (a combining mark). */
const FOLD_SKIP = 0xfffe;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * Redacts a text; `cutAtEnd`: the text was cut off, so it may end with the start of a form: its
 * last MIN_RUN - 1 characters are dropped, whatever they are (never only when they match).
 * `clearsJson`, where the redactor has it: true only when no string, key or number in `json` (the
 * JSON of parsed data) holds a form, as if each were redacted on its own (see jsonClearer).
 */
export type Redact = ((text: string, options?: { cutAtEnd?: boolean }) => string) & { clearsJson?: (json: string) => boolean };

/**
 * The forms a key can take in text, lowercased: the key, its hex, ROT13 and reversed, and the
 * parts of its base64, base64url and base32 encodings that do not depend on the bytes around it,
 * for each byte alignment the key can have inside a larger encoded blob.
 */
export function keyForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set([secret, bytes.toString('hex'), rot13(secret), [...secret].reverse().join('')]);
  // Base32: 5 bits a character; with `shift` bytes before the key, the characters that mix in
  // bits of the bytes around it are left out.
  for (let shift = 0; shift < 5; shift++) {
    const encoded = base32(Buffer.concat([Buffer.alloc(shift), bytes]));
    forms.add(encoded.slice(Math.ceil((8 * shift) / 5), Math.floor((8 * (shift + bytes.length)) / 5)));
  }
  // With `shift` bytes before the key, the first 0, 2 or 3 characters mix in those bytes, and
  // the characters after the last whole group of three depend on the bytes after it.
  const firstStable = [0, 2, 3];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    const end = Math.floor(padded.length / 3) * 4;
    for (const encoding of ['base64', 'base64url'] as const) forms.add(padded.toString(encoding).slice(firstStable[shift], end));
  }
  return [...forms].map((form) => form.toLowerCase());
}

function base32(bytes: Buffer): string {
  let out = '';
  let value = 0;
  let bits = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xfff;
    bits += 8;
    for (; bits >= 5; bits -= 5) out += BASE32[(value >>> (bits - 5)) & 31];
  }
  return bits > 0 ? out + BASE32[(value << (5 - bits)) & 31] : out;
}

function rot13(text: string): string {
  return text.replace(/[a-z]/gi, (char) => {
    const base = char <= 'Z' ? 0x41 : 0x61;
    return String.fromCharCode(((char.charCodeAt(0) - base + 13) % 26) + base);
  });
}

/**
 * Replaces every form of the secrets (see above) with [redacted]. Linear in the text's length.
 * Built on first use: a server that is never called does not pay for it at start-up.
 */
export function keyRedactor(secrets: readonly string[]): Redact {
  let built: Redact | undefined;
  const build = () => buildRedactor(secrets.map(secretPartOf));
  const redact: Redact = (text, options) => (built ??= build())(options?.cutAtEnd ? withoutTail(text) : text);
  redact.clearsJson = (json) => ((built ??= build()).clearsJson as (json: string) => boolean)(json);
  return redact;
}

/** A cut text without its last MIN_RUN - 1 characters (never half a surrogate pair): whatever start of a form the cut left there goes. */
function withoutTail(text: string): string {
  let end = Math.max(0, text.length - (MIN_RUN - 1));
  if (end > 0 && /[\ud800-\udbff]/.test(text.charAt(end - 1))) end--;
  return text.slice(0, end);
}

/**
 * A key's leading lowercase words, each with its underscore (`eng_live_`): the same in every key,
 * so anyone can write them. Narrow on purpose: what it took of a key without such a prefix (mixed
 * case, digits, `-`) would be secret characters left unredacted.
 */
const PUBLIC_PREFIX = /^(?:[a-z]{2,8}_){1,3}/;
/** The shortest secret part a prefix is taken off for (a window is then the whole of it, if shorter than MIN_RUN). */
const MIN_SECRET_PART = 8;

/**
 * What of a key is secret: the key without a public prefix such as `eng_live_`, when at least
 * MIN_SECRET_PART characters are left (else the whole key). Its forms are what is found: the whole
 * key in any form holds them (the prefix is left standing beside `[redacted]`), and text that
 * anyone could write (the prefix, its encodings) is never taken for the key. A secret part shorter
 * than MIN_RUN is found only whole.
 */
export function secretPartOf(key: string): string {
  const prefix = PUBLIC_PREFIX.exec(key)?.[0] ?? '';
  return key.length - prefix.length >= MIN_SECRET_PART ? key.slice(prefix.length) : key;
}

/** JSON's punctuation between its strings, keys and numbers (JSON.stringify writes no blanks there). */
const JSON_PUNCTUATION = new Set([...'",:[]{}'].map((char) => char.charCodeAt(0)));

/**
 * One scan of a whole JSON text in place of one per string, key and number: true when it finds no
 * form. The same as each redacted alone, because no form can run across the punctuation between
 * them: a run (and a hex run with separators) stops at a character no form has, and `"` is one, as
 * long as no form has JSON's punctuation (checked); a spaced-out run needs a blank between its
 * characters, and JSON.stringify puts none outside strings. A text with escapes (a backslash) or a
 * long string is not JSON this is asked about (sanitize.ts: plainJson). A scan across two numbers
 * ("12,34,…" reads as hex pairs) may find more than the parts: then the caller redacts each part.
 */
function jsonClearer(redact: Redact, forms: Uint16Array[], plainClears: (text: string) => boolean | undefined): (json: string) => boolean {
  const safe = forms.every((form) =>
    form.every((code) => !JSON_PUNCTUATION.has(code) && !JSON_PUNCTUATION.has(String.fromCharCode(code).toUpperCase().charCodeAt(0))),
  );
  return safe ? (json) => plainClears(json) ?? redact(json) === json : () => false;
}

// How plainClearer reads a character: between runs, part of a run, or outside plain text.
const PLAIN_BREAK = 0;
const PLAIN_RUN = 1;
const PLAIN_LEAVE = 2;

/**
 * `redact(text) === text` for text of printable ASCII without `%` or `\` (most JSON), undefined for
 * any other text. Exactly redact's scan: there a run's skeleton is its text lowercased (nothing to
 * decode, fold or drop), so it is built without those steps, and the first form found ends it.
 */
function plainClearer(isCandidate: (text: string, at: number) => boolean, index: Windows): (text: string) => boolean | undefined {
  const kinds = new Uint8Array(128).fill(PLAIN_LEAVE);
  for (let code = 0x20; code < 0x7f; code++) {
    const char = String.fromCharCode(code);
    if (char !== '%' && char !== '\\' && !isHiddenCodePoint(code)) kinds[code] = isCandidate(char, 0) ? PLAIN_RUN : PLAIN_BREAK;
  }
  // A run shorter than a window holds no form (redact reads it, and finds none).
  const holdsForm = (text: string, start: number, end: number) => end - start >= index.window && index.spans(plainSkeleton(text, start, end)).length > 0;
  return (text) => {
    let runStart = 0;
    for (let at = 0; at < text.length; at++) {
      const code = text.charCodeAt(at);
      const kind = code < 0x80 ? kinds[code] : PLAIN_LEAVE;
      if (kind === PLAIN_RUN) continue;
      if (kind === PLAIN_LEAVE) return undefined;
      if (holdsForm(text, runStart, at)) return false;
      runStart = at + 1;
    }
    if (holdsForm(text, runStart, text.length)) return false;
    return separatedSpans(text, index).length === 0;
  };
}

function buildRedactor(secrets: readonly string[]): Redact {
  const usable = secrets.filter((secret) => secret.length >= MIN_SECRET);
  if (usable.length === 0) return Object.assign((text: string) => text, { clearsJson: () => true });
  const forms = usable.flatMap(keyForms).map((form) => Uint16Array.from(form, (char) => char.charCodeAt(0)));
  const index = windowsOf(forms);
  const { window } = index;
  const isCandidate = candidateTest(forms);
  const redact: Redact = (text) => {
    if (text.length < window) return text;
    const found: Array<[number, number]> = [];
    // Most text holds no long run of the characters a form is made of: only the runs that could
    // hold one (with %XX, escapes, marks and invisible characters inside) are scanned.
    for (let at = 0; at < text.length; ) {
      while (at < text.length && !isCandidate(text, at)) at++;
      const runStart = at;
      while (at < text.length && isCandidate(text, at)) at++;
      if (at - runStart < window) continue;
      for (const [start, end] of index.spans(skeleton(text, runStart, at, true))) found.push([start, end]);
      // A `%` or `\` just before a form (or inside a run of one) is read as an escape with the form's
      // first characters as its digits ("%a1b2…", "\\u0123…"): the run is read again as it is written.
      if (hasEscapeStart(text, runStart, at)) {
        for (const [start, end] of index.spans(skeleton(text, runStart, at, false))) found.push([start, end]);
      }
    }
    found.push(...separatedSpans(text, index));
    return found.length === 0 ? text : replaceSpans(text, found);
  };
  redact.clearsJson = jsonClearer(redact, forms, plainClearer(isCandidate, index));
  return redact;
}

const BLANK = '[\\t \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000]';
const UNIT = '[\\ud800-\\udbff]?\\S';
/**
 * Forms with a separator between their hex pairs or characters, which breaks the runs the main
 * scan reads: a cheap seed (3 hex pairs, or 5 characters, each with one separator or blank
 * between) finds where one may start, and the run from there is read whole. Quantified groups
 * over the whole text were measured several times slower than the seeds.
 */
const SEPARATED = [
  {
    hex: true,
    seed: /[0-9a-f]{2}(?:, |[\t :,._/|-])(?:0x)?[0-9a-f]{2}(?:, |[\t :,._/|-])(?:0x)?[0-9a-f]{2}/gi,
    run: /(?:(?:0x)?[0-9a-f]{2}(?:, |[\t :,._/|-]))*(?:0x)?[0-9a-f]{2}/iy,
  },
  { hex: false, seed: new RegExp(`${UNIT}${BLANK}`.repeat(4) + UNIT, 'g'), run: new RegExp(`(?:${UNIT}${BLANK})*${UNIT}`, 'y') },
];

/** Spans of forms written with separators (see SEPARATED). */
function separatedSpans(text: string, index: Windows): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  for (const { hex, seed, run } of SEPARATED) {
    seed.lastIndex = 0;
    for (let hit = seed.exec(text); hit !== null; hit = seed.exec(text)) {
      const start = hex && /^0x$/i.test(text.slice(Math.max(0, hit.index - 2), hit.index)) ? hit.index - 2 : hit.index;
      run.lastIndex = start;
      const whole = (run.exec(text) as RegExpExecArray)[0];
      seed.lastIndex = start + whole.length;
      // A run too short to hold a window of a form (a date's "26-08-09", say) is not read further:
      // its skeleton has at most one character per hex digit, or per two characters spaced out.
      const most = hex ? whole.length : Math.ceil(whole.length / 2);
      if (most < index.window) continue;
      found.push(...index.spans(separatedSkeleton(start, whole, hex)));
    }
  }
  return found;
}

/**
 * Which characters can be part of a form as the skeleton reads it: the forms' own, hex digits,
 * the escapes' `%`, `\`, `x` and `u`, invisible characters, combining marks, and letters that
 * fold to one of those. An ASCII table and the shared table of invisible characters (remote mode
 * builds a redactor for each key it serves, so none copies a 64K table).
 */
function candidateTest(forms: Uint16Array[]): (text: string, at: number) => boolean {
  const hidden = hiddenBmpTable();
  const ascii = new Uint8Array(128);
  const formChars = new Set<number>();
  for (const form of forms) for (const code of form) formChars.add(code);
  for (const char of '%\\xu0123456789abcdef') formChars.add(char.charCodeAt(0));
  for (const code of formChars) {
    if (code >= 128) continue;
    ascii[code] = 1;
    ascii[String.fromCharCode(code).toUpperCase().charCodeAt(0)] = 1;
  }
  const foldsToCandidate = (point: number) => {
    const folded = foldPoint(point);
    return folded === FOLD_SKIP || (folded < 128 && ascii[folded] === 1);
  };
  return (text, at) => {
    const code = text.charCodeAt(at);
    if (code < 128) return ascii[code] === 1 || hidden[code] === 1;
    if (code < 0xd800 || code > 0xdfff) return hidden[code] === 1 || formChars.has(code) || foldsToCandidate(code);
    const point = text.codePointAt(code >= 0xdc00 && at > 0 ? at - 1 : at) as number;
    return isHiddenCodePoint(point) || foldsToCandidate(point);
  };
}

/** `text` with the spans (merged where they overlap) replaced by [redacted]. */
function replaceSpans(text: string, spans: Array<[number, number]>): string {
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let last = 0;
  for (const [start, end] of spans) {
    if (end <= last) continue;
    out += start > last ? `${text.slice(last, start)}${REDACTED}` : last === 0 ? REDACTED : '';
    last = end;
  }
  return out + text.slice(last);
}

/**
 * The forms' windows: MIN_RUN characters of every form at least that long, and a shorter form
 * (the key itself, when its secret part is short) only whole, so a window of an encoded form never
 * takes fewer of the key's characters than a window of a long key's.
 */
function windowsOf(forms: Uint16Array[]): Windows {
  const byLength = new Map<number, Uint16Array[]>();
  for (const form of forms) {
    const window = Math.min(MIN_RUN, form.length);
    byLength.set(window, [...(byLength.get(window) ?? []), form]);
  }
  return new Windows([...byLength].map(([window, group]) => new WindowIndex(group, window)));
}

/** Window indexes of several lengths, read as one. */
class Windows {
  readonly window: number;
  constructor(private readonly indexes: WindowIndex[]) {
    this.window = Math.min(...indexes.map((index) => index.window));
  }

  spans(skeleton: Skeleton): Array<[number, number]> {
    return this.indexes.length === 1 ? (this.indexes[0] as WindowIndex).spans(skeleton) : this.indexes.flatMap((index) => index.spans(skeleton));
  }
}

/**
 * Every window of `window` characters of the forms, by rolling hash (polynomial, in 32-bit integer
 * arithmetic; a hit is checked character by character, so a collision costs a comparison, never a
 * wrong answer), for a linear scan. A bit per low hash value spares the map look-up at most positions.
 */
class WindowIndex {
  private readonly windows = new Map<number, number[]>();
  /** One bit per value of a hash's low FILTER_BITS bits (8 KB): set where some window of a form has it. */
  private readonly filter = new Uint32Array(1 << (FILTER_BITS - 5));
  private readonly topPower: number;

  constructor(
    private readonly forms: Uint16Array[],
    readonly window: number,
  ) {
    let power = 1;
    for (let step = 1; step < window; step++) power = Math.imul(power, HASH_BASE);
    this.topPower = power;
    forms.forEach((form, formIndex) => {
      let hash = 0;
      for (let at = 0; at < form.length; at++) {
        hash = this.roll(hash, form[at] as number, at >= window ? (form[at - window] as number) : -1);
        if (at < window - 1) continue;
        const list = this.windows.get(hash) ?? [];
        list.push(formIndex, at - window + 1);
        this.windows.set(hash, list);
        const slot = (hash >>> 5) & ((1 << (FILTER_BITS - 5)) - 1);
        this.filter[slot] = (this.filter[slot] as number) | (1 << (hash & 31));
      }
    });
  }

  /** Spans [start, end) of the text to redact: runs of a form of at least `window` characters. */
  spans({ codes, from, to, length }: Skeleton): Array<[number, number]> {
    const spans: Array<[number, number]> = [];
    let start = 0;
    let hash = 0;
    let hashed = false;
    while (start + this.window <= length) {
      if (!hashed) {
        hash = 0;
        for (let offset = 0; offset < this.window; offset++) hash = this.roll(hash, codes[start + offset] as number, -1);
        hashed = true;
      }
      const filtered = ((this.filter[(hash >>> 5) & ((1 << (FILTER_BITS - 5)) - 1)] as number) >>> (hash & 31)) & 1;
      const candidates = filtered === 1 ? this.windows.get(hash) : undefined;
      const run = candidates ? this.longestRun(codes, length, start, candidates) : 0;
      if (run > 0) {
        spans.push([from[start] as number, to[start + run - 1] as number]);
        start += run;
        hashed = false;
        continue;
      }
      if (start + this.window < length) hash = this.roll(hash, codes[start + this.window] as number, codes[start] as number);
      start++;
    }
    return spans;
  }

  /** Adds `incoming` to a rolling hash, dropping `outgoing` (-1: none) from its front. */
  private roll(hash: number, incoming: number, outgoing: number): number {
    const kept = outgoing >= 0 ? (hash - Math.imul(outgoing, this.topPower)) | 0 : hash;
    return (Math.imul(kept, HASH_BASE) + incoming) | 0;
  }

  /** The longest run of a form starting at `start` (0 if the hash hit was a collision). */
  private longestRun(codes: Uint16Array, length: number, start: number, candidates: number[]): number {
    let best = 0;
    for (let at = 0; at < candidates.length; at += 2) {
      const form = this.forms[candidates[at] as number] as Uint16Array;
      const offset = candidates[at + 1] as number;
      let run = 0;
      while (start + run < length && offset + run < form.length && codes[start + run] === form[offset + run]) run++;
      if (run >= this.window && run > best) best = run;
    }
    return best;
  }
}

/** Text as the forms are compared with it: each character remembers the span [from, to) of the text it came from. */
interface Skeleton {
  codes: Uint16Array;
  from: Int32Array;
  to: Int32Array;
  length: number;
}

/**
 * `text` from `start` to `end` as the forms are compared with it: invisible characters and
 * combining marks dropped, %XX, \xNN and \u00NN decoded, other letters folded to the ASCII they
 * stand for (NFKD, marks dropped: full-width, mathematical, accented), ASCII lowercased.
 */
function skeleton(text: string, start: number, end: number, decode: boolean): Skeleton {
  const sk = emptySkeleton(end - start);
  for (let at = start; at < end; ) {
    const point = text.codePointAt(at) as number;
    const width = point > 0xffff ? 2 : 1;
    if (point < 0x80 ? (point < 0x20 && point !== 0x09 && point !== 0x0a) || point === 0x7f : isHiddenCodePoint(point)) {
      at += width;
      continue;
    }
    let code = point;
    let consumed = width;
    const escaped = decode && (point === 0x25 || point === 0x5c) ? escapeAt(text, at, end) : undefined;
    if (escaped) [code, consumed] = escaped;
    if (code >= 0x80 && code !== NO_MATCH) code = foldPoint(code);
    if (code === FOLD_SKIP) {
      at += consumed;
      continue;
    }
    push(sk, code, at, at + consumed);
    at += consumed;
  }
  return sk;
}

/** skeleton() of printable ASCII with no `%` or `\`: the text lowercased, each character its own span. */
function plainSkeleton(text: string, start: number, end: number): Skeleton {
  const sk = emptySkeleton(end - start);
  for (let at = start; at < end; at++) push(sk, text.charCodeAt(at), at, at + 1);
  return sk;
}

/** Whether text[start, end) holds a `%` or `\` (where an escape may begin). */
function hasEscapeStart(text: string, start: number, end: number): boolean {
  for (let at = start; at < end; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x25 || code === 0x5c) return true;
  }
  return false;
}

/** `%XX`, `\xNN` or `\uNNNN` at `at`: the character it stands for and the escape's length. */
function escapeAt(text: string, at: number, end: number): [number, number] | undefined {
  const percent = text.charCodeAt(at) === 0x25;
  const kind = percent ? 0 : text.charCodeAt(at + 1);
  const digitsAt = percent ? at + 1 : at + 2;
  const digits = percent || kind === 0x78 ? 2 : kind === 0x75 ? 4 : 0;
  if (digits === 0 || digitsAt + digits > end) return undefined;
  let value = 0;
  for (let offset = 0; offset < digits; offset++) {
    const digit = hexValue(text.charCodeAt(digitsAt + offset));
    if (digit < 0) return undefined;
    value = value * 16 + digit;
  }
  // A %XX or \xNN byte past ASCII is part of an encoded character, not a character of its own.
  return [digits === 2 && value >= 0x80 ? NO_MATCH : value, digitsAt + digits - at];
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * A run of SEPARATED found at `offset`: of hex pairs (`hex`: its hex digits, so it compares with
 * the hex form exactly as hex without separators does), or of spaced-out characters (folded as in skeleton).
 */
function separatedSkeleton(offset: number, match: string, hex: boolean): Skeleton {
  const sk = emptySkeleton(match.length);
  let unitStart = -1;
  for (let at = 0; at < match.length; ) {
    const point = match.codePointAt(at) as number;
    const width = point > 0xffff ? 2 : 1;
    if (hex && point === 0x30 && (match.charCodeAt(at + 1) | 0x20) === 0x78) {
      unitStart = at; // a 0x prefix: redacted with the pair it stands before
      at += 2;
      continue;
    }
    if (hex ? isHex(point) : !isBlank(point)) {
      let code = point >= 0x80 ? foldPoint(point) : point;
      if (code === FOLD_SKIP) code = NO_MATCH;
      push(sk, code, offset + (unitStart >= 0 ? unitStart : at), offset + at + width);
      unitStart = -1;
    }
    at += width;
  }
  return sk;
}

/** Runs up to this long share one skeleton's buffers; a longer one gets its own, so a huge text's is not kept. */
const SHARED_SKELETON_SIZE = 4096;
const sharedSkeleton = newSkeleton(SHARED_SKELETON_SIZE);

// Every skeleton is read (WindowIndex.spans) before the next is built, so one set of buffers serves
// them all: a call redacts each string of its data, and allocating three arrays per run showed in profiles.
function emptySkeleton(size: number): Skeleton {
  if (size > SHARED_SKELETON_SIZE) return newSkeleton(size);
  sharedSkeleton.length = 0;
  return sharedSkeleton;
}

function newSkeleton(size: number): Skeleton {
  return { codes: new Uint16Array(size), from: new Int32Array(size), to: new Int32Array(size), length: 0 };
}

function push(sk: Skeleton, code: number, from: number, to: number): void {
  sk.codes[sk.length] = code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
  sk.from[sk.length] = from;
  sk.to[sk.length] = to;
  sk.length++;
}

function isBlank(point: number): boolean {
  return (
    point === 0x09 ||
    point === 0x20 ||
    point === 0xa0 ||
    point === 0x1680 ||
    (point >= 0x2000 && point <= 0x200a) ||
    point === 0x202f ||
    point === 0x205f ||
    point === 0x3000
  );
}

// What each non-ASCII character folds to, worked out on first sight: BMP in a table, the rest in a bounded map.
const MARK = /^\p{M}$/u;
const MARKS = /\p{M}/gu;
let bmpFolds: Uint16Array | undefined;
const astralFolds = new Map<number, number>();

/** The ASCII character NFKD takes a character to once marks are dropped; FOLD_SKIP for a mark; NO_MATCH otherwise. */
function foldPoint(point: number): number {
  if (point < 0x10000) {
    bmpFolds ??= new Uint16Array(0x10000);
    const known = bmpFolds[point] as number;
    if (known !== 0) return known;
    const folded = computeFold(point);
    bmpFolds[point] = folded;
    return folded;
  }
  const known = astralFolds.get(point);
  if (known !== undefined) return known;
  const folded = computeFold(point);
  if (astralFolds.size < 4096) astralFolds.set(point, folded);
  return folded;
}

function computeFold(point: number): number {
  const char = String.fromCodePoint(point);
  if (MARK.test(char)) return FOLD_SKIP;
  const base = char.normalize('NFKD').replace(MARKS, '');
  const code = base.charCodeAt(0);
  return base.length === 1 && code > 0x20 && code < 0x7f ? code : NO_MATCH;
}

function isHex(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

// Credentials of any kind in log text (a header echoed in an error), not just our key.
const CREDENTIAL_VALUE = /(bearer\s+|x-api-key["':=\s]+)[^\s"',]+/gi;

/** For log lines: the key in every form, and any Bearer or x-api-key value. */
export function logRedactor(secrets: readonly string[]): Redact {
  const redactKey = keyRedactor(secrets);
  return (text, options) => redactKey(text, options).replace(CREDENTIAL_VALUE, `$1${REDACTED}`);
}
