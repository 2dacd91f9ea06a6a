// Text from the API is data, often written by end customers. Characters a reader cannot see are
// removed before the model sees it, so what the model reads is what a person would read; and
// outgoing text that carries them is refused, so what a person confirms is what is sent.

// Unicode's Default_Ignorable_Code_Point property (zero-width characters, direction controls,
// tags U+E0000–E0FFF, variation selectors, Hangul fillers, CGJ, Mongolian and Khmer invisibles),
// the remaining format characters (Cf), controls other than tab and newline, line and paragraph
// separators, and blanks that render as nothing (U+2800 braille blank, U+1D159 null notehead).
// Private use is left alone.
const HIDDEN_CLASS = '\\p{Default_Ignorable_Code_Point}\\p{Cf}\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F\\u2028\\u2029\\u2800\\u{1D159}';
const HIDDEN = new RegExp(`[${HIDDEN_CLASS}]`, 'gu');
const ONE_HIDDEN = new RegExp(`^[${HIDDEN_CLASS}]$`, 'u');

export function cleanText(text: string): string {
  // Most text is printable ASCII, which hides nothing: a plain scan costs far less than the Unicode class.
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code > 0x7e || (code < 0x20 && code !== 0x09 && code !== 0x0a)) return text.replace(HIDDEN, '');
  }
  return text;
}

/** A pattern of an ASCII word in any case, spelled out (a case-blind expression tests every bracket slower). */
function anyCase(word: string): string {
  return Array.from(word, (letter) => `[${letter}${letter.toUpperCase()}]`).join('');
}

/**
 * Opening brackets that look square: `[`, the full-width ［, and the white, tortoise-shell,
 * lenticular, corner and ceiling ones (⟦ 〚 〔 【 〖 〘 ⁅ ⦋ ⦍ ⦏ ⦗ ﹝ ❲ ⸢ ⸤ ⌈ ⌊ ⎡ ⎣). A small set, as the
 * quotes' is (QUOTE_LIKE): followed by a marker's words, each reads as the bracket of one of ours.
 */
const MARKER_BRACKETS =
  '\\[\\u2045\\u2308\\u230A\\u23A1\\u23A3\\u2772\\u27E6\\u298B\\u298D\\u298F\\u2997\\u2E22\\u2E24\\u3010\\u3014\\u3016\\u3018\\u301A\\uFE5D\\uFF3B';
/**
 * Such a bracket where a marker's words may follow (after any blank): them in ASCII, or a first
 * letter c, n or r with a character outside ASCII after ASCII letters and blank only, or a
 * character outside ASCII but another bracket (readsAsMarker tells). Other brackets are passed over
 * by the expression alone: a text of brackets costs about what it did before lookalikes were read.
 */
const MARKER_BRACKET = new RegExp(
  `[${MARKER_BRACKETS}](?=\\s*[cnrCNR\\u0080-\\uFFFF])(?=\\s*(?:${anyCase('cut')}\\b|${anyCase('not')}\\s+${anyCase('shown')}\\b|${anyCase('redacted')}\\b|[cnrCNR][a-zA-Z\\s]{0,62}(?![${MARKER_BRACKETS}])[^\\x00-\\x7f]|(?![${MARKER_BRACKETS}])[^\\x00-\\x7f]))`,
  'g',
);
const HOLDS_MARKER_BRACKET = new RegExp(`[${MARKER_BRACKETS}]`);
/** Whether a text (or JSON) of printable ASCII holds a marker's shape: plainJson's test, once. */
const HOLDS_MARKER_SHAPE = /\[\s*(?:cut|not\s+shown|redacted)\b/i;
/** The words of a marker this server writes (`…[cut: N characters in all]`, `[not shown: …]`, redact.ts's `[redacted]`), lower case, blank as one space. */
const MARKER_WORDS = ['cut', 'not shown', 'redacted'];

/**
 * Letters that look like those of the marker's words (Cyrillic, Greek, Armenian, small capitals),
 * read as those; compatibility forms (full-width ｃｕｔ, 𝐜𝐮𝐭) and accents are taken off first.
 */
const LOOKALIKE_LETTERS: Record<string, string> = Object.fromEntries(
  (
    [
      ['a', 'аɑαΑА'],
      ['c', 'сϲϹСᴄ'],
      ['d', 'ԁ'],
      ['e', 'еЕεΕҽ'],
      ['h', 'һНհΗ'],
      ['n', 'ոηΝ'],
      ['o', 'оОοΟօᴏ'],
      ['r', 'гᴦ'],
      ['s', 'ѕЅꜱ'],
      ['t', 'тТτΤ'],
      ['u', 'υսᴜ'],
      ['w', 'ԝԜѡᴡ'],
    ] as const
  ).flatMap(([letter, lookalikes]) => Array.from(lookalikes, (lookalike) => [lookalike, letter])),
);
const LOOKALIKE_LETTER = new RegExp(`[${Object.keys(LOOKALIKE_LETTERS).join('')}]`, 'gu');
/** The blank after a bracket, however long, before its words are read. */
const BLANKS = /\s*/y;
/** What ends a word as readsAsMarker reads it: neither a letter, a digit, a mark nor a blank. */
const WORD_END = '\u0000';
/** Each character as a person reads it in a word (readAs), remembered. */
const readCharacters = new Map<number, string>();

/**
 * One character as a person reads it in a word: a letter or digit without its accents, its
 * compatibility form expanded (ｃ, 𝐜 as c), a lookalike letter as the one it looks like, in lower
 * case; a mark as nothing; a blank as a space; anything else as WORD_END.
 */
function readAs(point: number): string {
  let read = readCharacters.get(point);
  if (read === undefined) {
    const character = String.fromCodePoint(point);
    if (/^\s$/u.test(character)) read = ' ';
    else if (/^\p{M}$/u.test(character)) read = '';
    else if (!/^[\p{L}\p{N}]$/u.test(character)) read = WORD_END;
    else
      read = character
        .normalize('NFKD')
        .replace(/\p{M}/gu, '')
        .replace(LOOKALIKE_LETTER, (letter) => LOOKALIKE_LETTERS[letter] as string)
        .toLowerCase();
    if (readCharacters.size < 10_000) readCharacters.set(point, read);
  }
  return read;
}

/**
 * Whether `text` from `from` on begins with a marker's words, read as a person reads them (see
 * readAs), in any case and spacing, as a word of its own. Read a character at a time, and given up
 * at the first that no marker's words go on with: a bracket on every character of a long text costs
 * a few look-ups each.
 */
function readsAsMarker(text: string, from: number): boolean {
  BLANKS.lastIndex = from;
  BLANKS.exec(text);
  let read = '';
  for (let at = BLANKS.lastIndex; at < text.length; ) {
    const point = text.codePointAt(at) as number;
    at += point > 0xffff ? 2 : 1;
    const next = readAs(point);
    if (next === WORD_END || (next === ' ' && MARKER_WORDS.includes(read))) break;
    if (next === '' || (next === ' ' && read.endsWith(' '))) continue;
    read += next;
    if (!MARKER_WORDS.some((words) => words.startsWith(read))) return false;
  }
  return MARKER_WORDS.includes(read);
}

/**
 * `text` with each marker's shape in it escaped: the opening bracket (or one that looks like it:
 * MARKER_BRACKETS) of a text shaped like a marker this server writes into the data it shows, in
 * any case and spacing and with lookalike letters, is shown with a backslash before it
 * (`\\[cut: …`, `\\［cut: …`), so that only our own markers appear bare and a customer cannot
 * write one. The customer's own backslashes right before it are doubled (one backslash before
 * `[cut` is shown as three): an odd run before a marker's bracket always means escaped, an even
 * run (none included) ours, as backslashes read everywhere. The same string when it has none.
 */
export function withoutMarkerShapes(text: string): string {
  if (!HOLDS_MARKER_BRACKET.test(text)) return text;
  return text.replace(MARKER_BRACKET, (bracket, at: number) =>
    readsAsMarker(text, at + bracket.length) ? `${'\\'.repeat(backslashesBefore(text, at) + 1)}${bracket}` : bracket,
  );
}

/**
 * How many backslashes stand in a row right before `at`: the count stops at the first other
 * character, so each backslash of a text is counted for one bracket at most.
 */
function backslashesBefore(text: string, at: number): number {
  let from = at;
  while (from > 0 && text.charCodeAt(from - 1) === 0x5c) from--;
  return at - from;
}

/** Whether `text` holds a character escaping a marker's shape may put a backslash before (or a backslash): search and equality then compare shown text. */
export function mayShowEscaped(text: string): boolean {
  return text.includes('\\') || HOLDS_MARKER_BRACKET.test(text);
}

/**
 * A string from the API as the model is shown it (before redaction and any cut): cleaned (see
 * cleanText), then with the shapes of our markers escaped. Search and projection match this text.
 */
export function shownText(raw: string): string {
  return withoutMarkerShapes(cleanText(raw));
}

export function isHiddenCodePoint(point: number): boolean {
  return ONE_HIDDEN.test(String.fromCodePoint(point));
}

let hiddenBmp: Uint8Array | undefined;
/** 1 for each hidden character of the Basic Multilingual Plane, for scans that test every character (surrogates: 0). */
export function hiddenBmpTable(): Uint8Array {
  if (!hiddenBmp) {
    hiddenBmp = new Uint8Array(0x10000);
    for (let code = 0; code < 0x10000; code++) if ((code < 0xd800 || code > 0xdfff) && isHiddenCodePoint(code)) hiddenBmp[code] = 1;
  }
  return hiddenBmp;
}

/** A character outside printable ASCII (or a control): the only ones cleanText may remove. */
const NOT_PLAIN = /[^\x20-\x7e\t\n]/g;

/**
 * Where the first character cleanText removes stands in `text` from `from` on, or -1: the same
 * test, character by character (a lone surrogate is kept, as cleanText keeps it). Text of
 * printable ASCII is passed over by one regular expression.
 */
export function nextHidden(text: string, from = 0): number {
  NOT_PLAIN.lastIndex = from;
  for (let found = NOT_PLAIN.exec(text); found; found = NOT_PLAIN.exec(text)) {
    const at = found.index;
    const code = text.charCodeAt(at);
    if (code >= 0xd800 && code <= 0xdbff ? isHiddenCodePoint(text.codePointAt(at) as number) : hiddenBmpTable()[code] === 1) return at;
  }
  return -1;
}

/** Nesting deeper than this is not shown: no real answer needs it, and it keeps every later step cheap and stack-safe. */
export const MAX_DEPTH = 64;
export const TOO_DEEP = `[not shown: nested more than ${MAX_DEPTH} levels deep]`;
export const TOO_MUCH = '[not shown: the answer is far larger than an answer can hold]';

/** Field names remembered per cleaning: a list's records share a few dozen; data with endless distinct names gains nothing. */
const MAX_REMEMBERED_NAMES = 1_000;

export interface CleanOptions {
  /** Applied to every string and key after cleaning and before any cut (see redact.ts). */
  redact?: (text: string, options?: { cutAtEnd?: boolean }) => string;
  /** Longer strings are cut to this first (no answer can show more of one string anyway). */
  maxStringChars?: number;
  /** Once this many characters have been cleaned, further strings are replaced by a marker: work stays bounded whatever the API sends. */
  maxTotalChars?: number;
}

/**
 * A copy of parsed JSON with every string and key cleaned (then redacted, then cut), and anything
 * nested deeper than MAX_DEPTH replaced by a short marker. Linear in the size of the data.
 */
export function cleanData(value: unknown, options: CleanOptions = {}): unknown {
  const { redact = (text: string) => text, maxStringChars = Number.POSITIVE_INFINITY } = options;
  let budget = options.maxTotalChars ?? Number.POSITIVE_INFINITY;
  const text = (raw: string): string => {
    if (budget <= 0) return TOO_MUCH;
    const cut = raw.length > maxStringChars;
    budget -= cut ? maxStringChars : raw.length;
    const clean = redact(shownText(cut ? raw.slice(0, maxStringChars) : raw), { cutAtEnd: cut });
    return cut ? `${clean}…[cut: ${raw.length} characters in all]` : clean;
  };
  const visit = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') return text(node);
    if (typeof node === 'number') return redactedNumber(node, options.redact);
    if (node === null || typeof node !== 'object') return node;
    if (depth >= MAX_DEPTH) return TOO_DEEP;
    if (Array.isArray(node)) return node.map((inner) => visit(inner, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(node)) setField(out, fieldName(key), visit(inner, depth + 1));
    return out;
  };
  // The records of a list share their field names: each is cleaned once (and counted every time).
  const names = new Map<string, string>();
  const fieldName = (raw: string): string => {
    const known = budget > 0 && raw.length <= maxStringChars ? names.get(raw) : undefined;
    if (known === undefined) {
      const clean = text(raw);
      if (names.size < MAX_REMEMBERED_NAMES) names.set(raw, clean);
      return clean;
    }
    budget -= raw.length;
    return known;
  };
  return visit(value, 0);
}

/**
 * Whether `json` (JSON.stringify of parsed data) is data cleanData would leave as it is, redaction
 * aside: printable ASCII with no escape (so no string holds a hidden character, a quote or a
 * backslash), no text shaped like our markers (withoutMarkerShapes), and nested no deeper than
 * cleanData shows. One scan; strings are skipped by their quotes.
 */
export function plainJson(json: string): boolean {
  if (!PLAIN_TEXT.test(json)) return false;
  if (json.includes('[') && HOLDS_MARKER_SHAPE.test(json)) return false;
  // Deeper than MAX_DEPTH takes more than MAX_DEPTH brackets: most JSON has a few, counted without reading it all.
  if (openingBrackets(json, MAX_DEPTH + 1) <= MAX_DEPTH) return true;
  let depth = 0;
  let inString = false;
  for (let at = 0; at < json.length; at++) {
    const code = json.charCodeAt(at);
    if (code === 0x22) inString = !inString;
    else if (inString) continue;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > MAX_DEPTH) return false;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return true;
}

/** Printable ASCII without a backslash: one regular expression, measured several times faster than a loop over the characters. */
const PLAIN_TEXT = /^[\x20-\x5b\x5d-\x7e]*$/;

/** How many `{` and `[` a text holds, counted up to `most`. */
function openingBrackets(text: string, most: number): number {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at >= 0 && count < most; at = text.indexOf(bracket, at + 1)) count++;
  }
  return count;
}

/**
 * A number whose digits are a run of a form of the key (the hex of a key made of digits, say) is
 * shown as the redacted text, in structured content as in the text: it would read the same there.
 */
function redactedNumber(value: number, redact: CleanOptions['redact']): number | string {
  if (!redact) return value;
  const digits = String(value);
  const shown = redact(digits);
  return shown === digits ? value : shown;
}

/**
 * Sets a field of a fresh plain object. Assignment (fast); only a "__proto__" key (from JSON, or
 * left by cleaning) is defined, so that it stays a plain field rather than setting the prototype.
 */
export function setField(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

// ---- Outgoing text -------------------------------------------------------------------------

const EMOJI = /\p{Emoji}/u;
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each of these is matched alone on purpose (a variation selector beside a pictograph)
const PICTOGRAPH = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]/u;
const ZWJ = 0x200d;
const MAX_LISTED = 10;

/**
 * Positions (1-based, in characters) of characters a person cannot see in `text`. Tab, newline
 * and carriage return are visible layout; a zero-width joiner inside an emoji sequence (👨‍👩‍👧)
 * and a variation selector after an emoji (❤️) are part of what the person sees.
 */
export function hiddenCharacters(text: string): Array<{ position: number; codePoint: number }> {
  // Nearly every parameter hides nothing: one scan says so, where listing code points costs a regular expression each (a 4 MB name held remote mode's loop for half a second).
  if (nextHidden(text) < 0) return [];
  const points = Array.from(text, (char) => char.codePointAt(0) as number);
  const found: Array<{ position: number; codePoint: number }> = [];
  points.forEach((point, index) => {
    if (point === 0x09 || point === 0x0a || point === 0x0d || !isHiddenCodePoint(point)) return;
    const before = index > 0 ? String.fromCodePoint(points[index - 1] as number) : '';
    const after = index + 1 < points.length ? String.fromCodePoint(points[index + 1] as number) : '';
    if (!isPartOfEmoji(point, before, after)) found.push({ position: index + 1, codePoint: point });
  });
  return found;
}

/** A variation selector after an emoji (❤️), or a zero-width joiner between two (👨‍👩‍👧): seen, not hidden. */
function isPartOfEmoji(point: number, before: string, after: string): boolean {
  if (point === 0xfe0f || point === 0xfe0e) return EMOJI.test(before);
  return point === ZWJ && PICTOGRAPH.test(before) && PICTOGRAPH.test(after);
}

/**
 * Outgoing text (a reply, a WhatsApp message, a campaign, any field of a write) must be what the
 * person saw: describes each string field that carries hidden characters, or undefined if none.
 */
export function describeHiddenText(params: unknown): string | undefined {
  const problems: string[] = [];
  const visit = (value: unknown, path: string, depth: number) => {
    if (typeof value === 'string') {
      const hidden = hiddenCharacters(value);
      if (hidden.length === 0) return;
      const listed = hidden
        .slice(0, MAX_LISTED)
        .map(({ position, codePoint }) => `${position} (U+${codePoint.toString(16).toUpperCase().padStart(4, '0')})`)
        .join(', ');
      const more = hidden.length > MAX_LISTED ? ` and ${hidden.length - MAX_LISTED} more` : '';
      problems.push(`${path} has invisible, direction-control or tag characters at position${hidden.length > 1 ? 's' : ''} ${listed}${more}`);
    } else if (value !== null && typeof value === 'object' && depth < MAX_DEPTH && problems.length < MAX_LISTED) {
      for (const [key, inner] of Object.entries(value)) visit(inner, `${path}.${key}`, depth + 1);
    }
  };
  visit(params, 'params', 0);
  if (problems.length === 0) return undefined;
  return `${problems.join('; ')}: a person cannot see them, so text carrying them is not sent. Remove them and try again`;
}

// ---- Text on one line ------------------------------------------------------------------------

const LINE_BREAKING = `\\n\\r\\t${HIDDEN_CLASS}\\p{Zl}\\p{Zp}`;
// Every character that looks like a closing quote (curly, primes ″ ‴ ⁗, modifier letters ʺ ˝ ˵ ˶ ˮ,
// the Hebrew gershayim ״ and the Vedic ᳓, full-width, CJK, the low quotes „ ‚ and ⹂, the
// ornaments ❛❜❝❞❟❠ and 🙶🙷🙸) is escaped too, or a name could seem to close its quote and go on
// as our own words.
const QUOTE_LIKE =
  '\\p{Pi}\\p{Pf}\\u02BA\\u02DD\\u02EE\\u02F5\\u02F6\\u05F4\\u1CD3\\u201A\\u201E\\u2033\\u2034\\u2036\\u2037\\u2057\\u275B-\\u2760\\u2E42\\u3003\\u301D-\\u301F\\uFF02\\u{1F676}-\\u{1F678}';
// The straight double quote too, in quoted text only (in JSON it is structural): `Promo" … 1 recipient(s) … "x`
// read in a plain-text question as a name that ended at its first ", and our own words after it.
const QUOTED_UNSAFE = new RegExp(`[\\\\"${QUOTE_LIKE}${LINE_BREAKING}]`, 'gu');
const QUOTE_LIKE_CHAR = new RegExp(`^[${QUOTE_LIKE}]$`, 'u');
const LINE_UNSAFE = new RegExp(`[${LINE_BREAKING}]`, 'gu');
const ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '“': '\\“', '”': '\\”', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text made safe to show inside “…” on one line of a statement: backslashes and curly quotes are
 * escaped (so the text cannot close its quote), and newlines, controls and invisible characters
 * are written as escapes (so it cannot start a line of its own or hide anything).
 */
export function inlineText(text: string): string {
  return escapeLinkOpeners(escapeBlankRuns(escapeStackedMarks(escapeLooseQuoteMarks(escapeMatches(text, QUOTED_UNSAFE)))));
}

/**
 * `](` written as `]\(` (its own backslashes are doubled already): a preview the model shows a
 * person in a chat is drawn as Markdown, where `![Recipients: 1](https://…)` in a campaign's name
 * drew the sender's picture of the facts inside the statement, and `[Klik di sini](https://…)` in
 * a message a link whose address was not seen. No inline link or image opens in quoted text now.
 */
function escapeLinkOpeners(text: string): string {
  return text.includes('](') ? text.replaceAll('](', ']\\(') : text;
}

/** How many blanks in a row quoted text keeps as they are: two after a full stop, as some type; no sentence needs more. */
const MAX_BLANKS_IN_A_ROW = 2;
/** A blank: a space of any width, with the marks drawn on it (a faint accent on each space still left a line's width of nothing). */
const BLANK = '\\p{Zs}\\p{M}*';
const BLANK_RUN = new RegExp(`(?:${BLANK}){${MAX_BLANKS_IN_A_ROW + 1}}`, 'u');
/** The space of a blank after MAX_BLANKS_IN_A_ROW others in a row. */
const RUN_ON_BLANK = new RegExp(`(?<=(?:${BLANK}){${MAX_BLANKS_IN_A_ROW}})\\p{Zs}`, 'gu');

/**
 * Blanks past MAX_BLANKS_IN_A_ROW in a row written as escapes (\u{20}, \u{A0}): where a statement is
 * drawn with its spaces kept (the card, a host's question), a run of them as wide as a line made
 * the text after it begin a line of its own. A campaign named “Promo” + 150 spaces + “• Recipients:
 * 1” showed that line under our own, as if it were one of ours (review48). Shown whole, as before.
 */
function escapeBlankRuns(text: string): string {
  if (!BLANK_RUN.test(text)) return text;
  return text.replace(RUN_ON_BLANK, (blank) => `\\u{${(blank.codePointAt(0) as number).toString(16).toUpperCase()}}`);
}

/**
 * Combining marks that look like a quote (the double acute ̋ and double vertical line ̎, the commas
 * above ̒ ̓ ̔ ̕ ̓) where no letter or digit is under them (after a blank, a punctuation mark, an
 * escape, or first): drawn on nothing, Chromium shows “Promo ̋ on …” exactly as the escaped
 * “Promo˝ on …”. On a letter they are its accent (ő), and stay.
 */
const QUOTE_LIKE_MARKS = '\\u030B\\u030E\\u0312-\\u0315\\u0343';
const QUOTE_LIKE_MARK = new RegExp(`[${QUOTE_LIKE_MARKS}]`, 'u');
const QUOTE_LIKE_MARK_ANY = new RegExp(QUOTE_LIKE_MARK.source, 'gu');
/** A run of marks and the character it is drawn on (none at the start): each run is read once, so a text of marks costs its length. */
const MARK_RUN = /(^|\P{M})(\p{M}+)/gu;
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/** `text` with each quote-like mark on no letter or digit (see QUOTE_LIKE_MARKS) written as an escape (\u{30B}). */
function escapeLooseQuoteMarks(text: string): string {
  if (!QUOTE_LIKE_MARK.test(text)) return text;
  return text.replace(MARK_RUN, (run, base: string, marks: string) =>
    LETTER_OR_DIGIT.test(base)
      ? run
      : base + marks.replace(QUOTE_LIKE_MARK_ANY, (mark) => `\\u{${(mark.codePointAt(0) as number).toString(16).toUpperCase()}}`),
  );
}

/** How many combining marks in a row one letter keeps as they are: more than any script writes on one letter (Vietnamese 2, Hebrew with points and accents 4). */
const MAX_STACKED_MARKS = 4;
/** A nonspacing or enclosing mark after MAX_STACKED_MARKS others in a row: a browser stacks it higher (or deeper) still. */
const STACKED_MARK = new RegExp(`(?<=[\\p{Mn}\\p{Me}]{${MAX_STACKED_MARKS}})[\\p{Mn}\\p{Me}]`, 'gu');

/**
 * Combining marks past MAX_STACKED_MARKS in a row written as escapes (\u{301}): a browser draws
 * every mark on its letter, and hundreds of them (“Zalgo” text) rise out of the line and paint over
 * the lines around it (on the card, the text a person approves). The text is still shown whole.
 */
function escapeStackedMarks(text: string): string {
  return text.replace(STACKED_MARK, (mark) => `\\u{${(mark.codePointAt(0) as number).toString(16).toUpperCase()}}`);
}

/**
 * Text another party wrote (the API's message in a failure, which may echo what a customer wrote),
 * in “quotes” on one line, as inlineText() leaves it: set into a sentence of ours, none of it can
 * read as our own words, start a line, or seem to close its quote.
 */
export function quotedText(text: string): string {
  return `“${inlineText(text)}”`;
}

const QUOTE_LIKE_ANY = new RegExp(`[${QUOTE_LIKE}]`, 'gu');

/**
 * JSON of data read from the API (its backslashes escaped already) with every quote-like character
 * escaped as inlineText() escapes it: a lone “ or ” in it would pair with a quote of the statement's.
 */
export function escapeQuotes(json: string): string {
  return escapeLinkOpeners(escapeBlankRuns(escapeStackedMarks(escapeLooseQuoteMarks(json.replace(QUOTE_LIKE_ANY, '\\$&')))));
}

/** A line of our own text, kept one line: only line breaks and invisible characters are escaped. */
export function oneLine(text: string): string {
  return escapeMatches(text, LINE_UNSAFE);
}

function escapeMatches(text: string, unsafe: RegExp): string {
  return text.replace(unsafe, (char, offset: number) => {
    const escaped = ESCAPES[char];
    if (escaped !== undefined) return escaped;
    if (QUOTE_LIKE_CHAR.test(char)) return `\\${char}`;
    const point = char.codePointAt(0) as number;
    const after = offset + char.length < text.length ? String.fromCodePoint(text.codePointAt(offset + char.length) as number) : '';
    return isPartOfEmoji(point, characterBefore(text, offset), after) ? char : `\\u{${point.toString(16).toUpperCase()}}`;
  });
}

function characterBefore(text: string, offset: number): string {
  if (offset <= 0) return '';
  const low = text.charCodeAt(offset - 1);
  const start = low >= 0xdc00 && low <= 0xdfff && offset >= 2 ? offset - 2 : offset - 1;
  return String.fromCodePoint(text.codePointAt(start) as number);
}

// ---- Right-to-left text in a question ----------------------------------------------------------

/** Letters of the scripts written right to left: their order pulls digits and brackets around them along. */
const RIGHT_TO_LEFT =
  /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}\p{Script=Yezidi}]/u;
/**
 * A quoted text as inlineText() leaves it: its quotes, backslashes and line breaks escaped, so the
 * first unescaped ” closes it. An escape outside quotes (`\“` in the JSON brief() shows) is matched
 * alone, and left: an escaped “ opens nothing.
 */
const QUOTED_SPAN = /\\[^\n]|“((?:\\[^\n]|[^\\”\n])*)”/gu;
const FIRST_STRONG_ISOLATE = '\u2068';
const POP_DIRECTIONAL_ISOLATE = '\u2069';

/**
 * A statement as a host shows it to a person (the question's text): each quoted text that holds
 * right-to-left letters isolated (U+2068 … U+2069), so it is ordered on its own. Without it a
 * customer named `שלום 12 (6289999)` drew the real number, after the quotes, inside them, and its
 * own where the real one goes (the card isolates with <bdi>; this is the same for plain text).
 * Only for what a person reads: the model's copy stays free of invisible characters.
 */
export function isolateRightToLeft(statement: string): string {
  if (!RIGHT_TO_LEFT.test(statement)) return statement;
  return statement.replace(QUOTED_SPAN, (span, inner: string | undefined) =>
    inner !== undefined && RIGHT_TO_LEFT.test(inner) ? `“${FIRST_STRONG_ISOLATE}${inner}${POP_DIRECTIONAL_ISOLATE}”` : span,
  );
}
