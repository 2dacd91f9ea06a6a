// Setup's changes to a JSON config as edits to its text: our entries (and VS Code's key input)
// are written in place or added after the person's, and every other byte stays as it was: their
// spacing, escapes, numbers and line endings, which writing the whole file anew would respell.
// The text given is valid JSON (JSON.parse took it), so only strings and brackets need telling apart;
// comments a host takes are blanked in it (jsonc.ts), and Layout.source holds the text with them.

/** Where a value is in the text: from `start` to just before `end`. */
export interface Span {
  start: number;
  end: number;
}

export interface Member {
  key: string;
  keyStart: number;
  value: Span;
}

/** The object or array opening at `open`: its members (or elements) and where it closes. */
export interface Container<Item> {
  open: number;
  close: number;
  items: Item[];
}

export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** How inserted JSON is laid out: the file's own indent unit and line ending. */
export interface Layout {
  unit: string;
  eol: string;
  /** The person's text, its comments in it, where the text scanned has them blanked. */
  source?: string;
}

/** The members of the object opening at `open`. */
export function objectAt(text: string, open: number): Container<Member> {
  const items: Member[] = [];
  let i = skipSpace(text, open + 1);
  while (text[i] !== '}') {
    const keyStart = i;
    const keyEnd = stringEnd(text, i);
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, start);
    items.push({ key: JSON.parse(text.slice(keyStart, keyEnd)) as string, keyStart, value: { start, end } });
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return { open, close: i, items };
}

/** The elements of the array opening at `open`. */
export function arrayAt(text: string, open: number): Container<Span> {
  const items: Span[] = [];
  let i = skipSpace(text, open + 1);
  while (text[i] !== ']') {
    const end = valueEnd(text, i);
    items.push({ start: i, end });
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return { open, close: i, items };
}

export function skipSpace(text: string, from: number): number {
  let i = from;
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i++;
  return i;
}

/** Past the closing quote of the string that opens at `start`. */
export function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** Past the end of the value that starts at `start`. */
function valueEnd(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return stringEnd(text, start);
  if (first !== '{' && first !== '[') {
    let i = start;
    while (i < text.length && !',}] \t\r\n'.includes(text[i] as string)) i++;
    return i;
  }
  let depth = 0;
  for (let i = start; ; i++) {
    const char = text[i];
    if (char === '"') i = stringEnd(text, i) - 1;
    else if (char === '{' || char === '[') depth++;
    else if ((char === '}' || char === ']') && --depth === 0) return i + 1;
  }
}

/**
 * The file's line ending: CRLF, LF, or a lone CR (classic Mac), which JSON takes as whitespace too;
 * LF for a file on one line.
 */
export function lineEnding(text: string): string {
  if (text.includes('\r\n')) return '\r\n';
  return text.includes('\r') && !text.includes('\n') ? '\r' : '\n';
}

/** Where the last line break at or before `at` is (the LF of a CRLF), -1 for none. */
function lastBreak(text: string, at: number): number {
  return Math.max(text.lastIndexOf('\n', at), text.lastIndexOf('\r', at));
}

/** The spaces and tabs that begin the line `at` is on. */
function lineIndent(text: string, at: number): string {
  const lineStart = lastBreak(text, at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, at))?.[0] ?? '';
}

/**
 * Where values are written on lines of their own (the JSON spans more than one line, blank lines
 * before and after it aside), the indent of the line a value at `at` starts on; undefined where the
 * JSON is all on one line, as it stays.
 */
export function baseAt(text: string, at: number): string | undefined {
  // Not a regular expression: one like \n\s*\S takes time with the square of a run of blank lines.
  let last = text.length - 1;
  while (last >= 0 && ' \t\r\n'.includes(text[last] as string)) last--;
  return lastBreak(text, last) > skipSpace(text, 0) ? lineIndent(text, at) : undefined;
}

/** `value` as JSON, laid out to start on a line indented `base`, or on one line where that is undefined. */
export function renderValue(value: unknown, layout: Layout, base: string | undefined): string {
  if (base === undefined) return JSON.stringify(value);
  // JSON.stringify indents at most 10 characters a level: one space a level, each made the file's unit.
  return JSON.stringify(value, null, 1).replace(/\n( *)/g, (_, depth: string) => layout.eol + base + layout.unit.repeat(depth.length));
}

/** `items` (each rendered at the indent it is given) added at the end of `container`, after its own. */
export function appendEdit(text: string, container: Container<Span | Member>, items: ((base: string | undefined) => string)[], layout: Layout): Edit {
  const last = container.items.at(-1);
  if (last !== undefined) {
    const lastStart = 'key' in last ? last.keyStart : last.start;
    const lastEnd = 'key' in last ? last.value.end : last.end;
    // The spacing the person put before their last item, so ours sit as theirs do.
    let delimiter = lastStart - 1;
    while (' \t\r\n'.includes(text[delimiter] as string)) delimiter--;
    const spacing = text.slice(delimiter + 1, lastStart);
    const newline = lastBreak(spacing, spacing.length - 1);
    // Not a comment's blanks: a comment written there is the person's, above their item only.
    const commented = layout.source !== undefined && layout.source.slice(delimiter + 1, lastStart) !== spacing;
    const separator = commented ? (newline < 0 ? ' ' : layout.eol + spacing.slice(newline + 1)) : spacing;
    const base = newline < 0 ? undefined : spacing.slice(newline + 1);
    return { start: lastEnd, end: lastEnd, text: items.map((item) => `,${separator}${item(base)}`).join('') };
  }
  const outer = baseAt(text, container.open);
  // Comments in the empty container stay, ours after them.
  const inside = layout.source?.slice(container.open + 1, container.close) ?? '';
  const kept = inside === text.slice(container.open + 1, container.close) ? '' : inside.replace(/[ \t\r\n]+$/, '');
  if (outer === undefined)
    return { start: container.open + 1, end: container.close, text: `${kept}${kept ? ' ' : ''}${items.map((item) => item(undefined)).join(',')}` };
  const base = outer + layout.unit;
  const inner = items.map((item) => `${base}${item(base)}`).join(`,${layout.eol}`);
  return { start: container.open + 1, end: container.close, text: `${kept}${layout.eol}${inner}${layout.eol}${outer}` };
}

/** A member `key: value`, for appendEdit. */
export const memberText = (key: string, value: unknown, layout: Layout) => (base: string | undefined) =>
  `${JSON.stringify(key)}${base === undefined ? ':' : ': '}${renderValue(value, layout, base)}`;

/** The text with each edit made; the edits do not overlap. */
export function applyEdits(text: string, edits: Edit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.start - a.start)) result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  return result;
}
