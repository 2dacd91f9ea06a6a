// The key must never reach the model or a log, whatever the API echoes back. A hostile or buggy
// API can return the key as it is, in other letter case, URL-encoded, hex or base64 encoded (in
// any of the three byte alignments), or with invisible characters between its characters. Every
// such form is found, and so is any run of MIN_RUN or more characters of a form, so a fragment
// the API left is caught too. Redaction runs after invisible characters are cleaned and before
// anything is cut; where a text had to be cut first (a huge log message), the start of a form
// left at the cut is redacted as well.
import { hiddenBmpTable, isHiddenCodePoint } from './sanitize.js';

export const REDACTED = '[redacted]';
/** The shortest run of a key's form that is redacted: long enough that ids and words never match by chance. */
const MIN_RUN = 12;
/** The shortest start of a form that is redacted where a text was cut off. */
const MIN_PREFIX_AT_CUT = 8;
/** Keys shorter than this are not treated as secrets (they would match ordinary text). */
const MIN_SECRET = 4;
const HASH_BASE = 257;
const HASH_MOD = 1_000_000_007;
/** A skeleton character that matches no form (non-ASCII text). */
const NO_MATCH = 0xffff;

/** Redacts a text; `cutAtEnd`: the text was cut off, so it may end with the start of a form. */
export type Redact = (text: string, options?: { cutAtEnd?: boolean }) => string;

/**
 * The forms a key can take in text, lowercased: the key, its hex, and the parts of its base64 and
 * base64url encodings that do not depend on the bytes around it, for each of the three byte
 * alignments the key can have inside a larger encoded blob.
 */
export function keyForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set([secret, bytes.toString('hex')]);
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

/**
 * Replaces every form of the secrets (see above) with [redacted]. Linear in the text's length.
 * Built on first use: a server that is never called does not pay for it at start-up.
 */
export function keyRedactor(secrets: readonly string[]): Redact {
  let built: Redact | undefined;
  return (text, options) => (built ??= buildRedactor(secrets))(text, options);
}

function buildRedactor(secrets: readonly string[]): Redact {
  const usable = secrets.filter((secret) => secret.length >= MIN_SECRET);
  if (usable.length === 0) return (text) => text;
  const window = Math.min(MIN_RUN, ...usable.map((secret) => secret.length));
  const forms = usable
    .flatMap(keyForms)
    .filter((form) => form.length >= window)
    .map((form) => Uint16Array.from(form, (char) => char.charCodeAt(0)));
  const index = new WindowIndex(forms, window);
  // Most text holds no long run of the characters a form is made of: a table finds the runs that
  // could hold one (with %XX and invisible characters inside), and only those are scanned.
  // The shared table of invisible characters, plus the characters of the forms (a small set, kept
  // apart so that building a redactor, once per call in remote mode, copies no 64K table).
  const hidden = hiddenBmpTable();
  const formChars = new Set<number>();
  for (const form of forms) for (const code of form) formChars.add(code);
  for (const code of [...formChars, ...Array.from('%0123456789abcdef', (char) => char.charCodeAt(0))]) {
    const char = String.fromCharCode(code);
    formChars.add(code);
    formChars.add(char.toUpperCase().charCodeAt(0));
  }
  const ascii = new Uint8Array(128);
  for (const code of formChars) if (code < 128) ascii[code] = 1;
  const isCandidate = (text: string, at: number) => {
    const code = text.charCodeAt(at);
    if (code < 128) return ascii[code] === 1 || hidden[code] === 1;
    if (code < 0xd800 || code > 0xdfff) return hidden[code] === 1 || formChars.has(code);
    return isHiddenCodePoint(text.codePointAt(at) as number) || (code >= 0xdc00 && at > 0 && isHiddenCodePoint(text.codePointAt(at - 1) as number));
  };
  const minimum = Math.min(window, MIN_PREFIX_AT_CUT);

  return (text, options = {}) => {
    if (text.length < minimum) return text;
    let out = '';
    let last = 0;
    for (let at = 0; at < text.length; ) {
      while (at < text.length && !isCandidate(text, at)) at++;
      const runStart = at;
      while (at < text.length && isCandidate(text, at)) at++;
      if (at - runStart < minimum) continue;
      const atEnd = options.cutAtEnd === true && at === text.length;
      for (const [start, end] of index.spans(text.slice(runStart, at), atEnd)) {
        out += text.slice(last, runStart + start) + REDACTED;
        last = runStart + end;
      }
    }
    return last === 0 ? text : out + text.slice(last);
  };
}

/** Every window of `window` characters of the forms, by rolling hash, for a linear scan. */
class WindowIndex {
  private readonly windows = new Map<number, number[]>();
  private readonly topPower: number;

  constructor(
    private readonly forms: Uint16Array[],
    private readonly window: number,
  ) {
    let power = 1;
    for (let step = 1; step < window; step++) power = (power * HASH_BASE) % HASH_MOD;
    this.topPower = power;
    forms.forEach((form, formIndex) => {
      let hash = 0;
      for (let at = 0; at < form.length; at++) {
        hash = this.roll(hash, form[at] as number, at >= window ? (form[at - window] as number) : -1);
        if (at < window - 1) continue;
        const list = this.windows.get(hash) ?? [];
        list.push(formIndex, at - window + 1);
        this.windows.set(hash, list);
      }
    });
  }

  /** Spans [start, end) of `text` to redact: runs of a form of at least `window` characters, and with `atEnd` a form's start at the end. */
  spans(text: string, atEnd: boolean): Array<[number, number]> {
    const { codes, from, to, length } = skeleton(text);
    const spans: Array<[number, number]> = [];
    let start = 0;
    let hash = -1;
    while (start + this.window <= length) {
      if (hash < 0) {
        hash = 0;
        for (let offset = 0; offset < this.window; offset++) hash = this.roll(hash, codes[start + offset] as number, -1);
      }
      const candidates = this.windows.get(hash);
      const run = candidates ? this.longestRun(codes, length, start, candidates) : 0;
      if (run > 0) {
        spans.push([from[start] as number, to[start + run - 1] as number]);
        start += run;
        hash = -1;
        continue;
      }
      if (start + this.window < length) hash = this.roll(hash, codes[start + this.window] as number, codes[start] as number);
      start++;
    }
    if (atEnd) {
      const size = this.startOfFormAtEnd(codes, length);
      const covered = spans.length > 0 ? (spans[spans.length - 1] as [number, number])[1] : 0;
      if (size > 0 && (from[length - size] as number) >= covered) spans.push([from[length - size] as number, to[length - 1] as number]);
    }
    return spans;
  }

  /** Adds `incoming` to a rolling hash, dropping `outgoing` (-1: none) from its front. */
  private roll(hash: number, incoming: number, outgoing: number): number {
    let next = hash;
    if (outgoing >= 0) next = (next - ((outgoing * this.topPower) % HASH_MOD) + HASH_MOD) % HASH_MOD;
    return (next * HASH_BASE + incoming) % HASH_MOD;
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

  /** The length of the longest start of a form (at least MIN_PREFIX_AT_CUT) that the skeleton ends with; 0 if none. */
  private startOfFormAtEnd(codes: Uint16Array, length: number): number {
    let best = 0;
    for (const form of this.forms) {
      for (let size = Math.min(form.length, length); size >= MIN_PREFIX_AT_CUT && size > best; size--) {
        let same = true;
        for (let at = 0; at < size && same; at++) same = codes[length - size + at] === form[at];
        if (same) best = size;
      }
    }
    return best;
  }
}

/**
 * The text as the forms are compared with it: invisible characters dropped, %XX decoded, ASCII
 * lowercased; each skeleton character remembers the span of text it came from.
 */
function skeleton(text: string): { codes: Uint16Array; from: Int32Array; to: Int32Array; length: number } {
  const codes = new Uint16Array(text.length);
  const from = new Int32Array(text.length);
  const to = new Int32Array(text.length);
  let length = 0;
  for (let at = 0; at < text.length; ) {
    const point = text.codePointAt(at) as number;
    const width = point > 0xffff ? 2 : 1;
    const hidden = point < 0x80 ? (point < 0x20 && point !== 0x09 && point !== 0x0a) || point === 0x7f : isHiddenCodePoint(point);
    if (hidden) {
      at += width;
      continue;
    }
    let code = point < 0x80 ? point : NO_MATCH;
    let consumed = width;
    if (point === 0x25 && isHex(text.charCodeAt(at + 1)) && isHex(text.charCodeAt(at + 2))) {
      code = parseInt(text.slice(at + 1, at + 3), 16);
      consumed = 3;
    }
    if (code >= 0x41 && code <= 0x5a) code += 0x20;
    codes[length] = code;
    from[length] = at;
    to[length] = at + consumed;
    length++;
    at += consumed;
  }
  return { codes, from, to, length };
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
