// Reading a TOML file (a host's config, the person's own text, possibly hostile) as a list of
// statements: table headers, key = value lines, and blank or comment lines. Values are read only
// far enough to know where each ends, multi-line strings and arrays included; all that is kept of
// them is a one-line string or an array of them (an env setting, env_vars). Anything it cannot tell
// the kind of is refused with TomlSyntax, never guessed at.
import { quoted } from './shown.js';

export interface Statement {
  kind: 'header' | 'keyval' | 'trivia';
  /** [start, end) in the text; end is past the line's newline. */
  start: number;
  end: number;
  /** header: the table's path; keyval: the (dotted) key. */
  keys: string[];
  /** keyval: where its value ends (what follows, blanks and a comment, stays when the value is replaced). */
  valueEnd?: number;
  /** keyval: the items of its value when that is an array of one-line strings (env_vars). */
  strings?: string[];
  /** keyval: its value when that is a one-line string (an env setting). */
  string?: string;
  arrayTable?: boolean;
}

export class TomlSyntax extends Error {}

/** Valid TOML, nested past MAX_NESTING: refused in the words of a JSON file nested too deeply. */
export class NestedTooDeep extends TomlSyntax {}

export const ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', e: '\x1b', '"': '"', '\\': '\\' };

/** Reads the file as statements; throws TomlSyntax where it cannot tell what something is. */
export function scanToml(text: string): Statement[] {
  return new TomlScanner(text).statements();
}

/**
 * What a value was, as far as the statement needs it: a one-line string's text, an array's items
 * while they are all one-line strings, or undefined for anything else.
 */
type ValueRead = string | string[] | undefined;

/** Longest bare key or scalar (number, boolean, date) read at once. */
const TOKEN_WINDOW = 256;
/**
 * Arrays and inline tables nested deeper than this are refused: each level is a call, and a file
 * of 20,000 [ overflowed the stack (a RangeError, not a refusal). No config nests beyond a few.
 */
const MAX_NESTING = 100;

class TomlScanner {
  private at = 0;

  constructor(private readonly text: string) {}

  statements(): Statement[] {
    const statements: Statement[] = [];
    while (this.at < this.text.length) {
      const start = this.at;
      this.skipSpaces();
      if (this.atLineEnd()) statements.push(this.trivia(start));
      else if (this.char() === '[') statements.push(this.header(start));
      else statements.push(this.keyValue(start));
    }
    return statements;
  }

  // ---- statements --------------------------------------------------------------------------

  /** A blank or comment-only line. */
  private trivia(start: number): Statement {
    this.endOfLine();
    return { kind: 'trivia', start, end: this.at, keys: [] };
  }

  /** [table] or [[array.of.tables]]. */
  private header(start: number): Statement {
    const arrayTable = this.peek('[[');
    this.at += arrayTable ? 2 : 1;
    const keys = this.key();
    if (!this.peek(arrayTable ? ']]' : ']')) this.fail('a table header is not closed');
    this.at += arrayTable ? 2 : 1;
    this.endOfLine();
    return { kind: 'header', start, end: this.at, keys, arrayTable };
  }

  private keyValue(start: number): Statement {
    const keys = this.key();
    if (this.char() !== '=') this.fail('expected = after a key');
    this.at++;
    this.skipSpaces();
    const read = this.value(0);
    const valueEnd = this.at;
    this.endOfLine();
    const strings = Array.isArray(read) ? read : undefined;
    const string = typeof read === 'string' ? read : undefined;
    return { kind: 'keyval', start, end: this.at, keys, valueEnd, ...(strings ? { strings } : {}), ...(string !== undefined ? { string } : {}) };
  }

  /** A key's parts: bare, "quoted" or 'literal', joined by dots. */
  private key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skipSpaces();
      if (this.char() === '"') parts.push(this.basicString());
      else if (this.char() === "'") parts.push(this.literalString());
      else parts.push(this.token(/^[A-Za-z0-9_-]+/, 'expected a key'));
      this.skipSpaces();
      if (this.char() !== '.') return parts;
      this.at++;
    }
  }

  // ---- values ------------------------------------------------------------------------------

  /** A value inside `depth` arrays and inline tables. */
  private value(depth: number): ValueRead {
    if (this.peek('"""') || this.peek("'''")) return this.multilineString(this.peek('"""') ? '"""' : "'''");
    if (this.char() === '"') return this.basicString();
    if (this.char() === "'") return this.literalString();
    if (this.char() === '[') return this.array(this.nested(depth));
    if (this.char() === '{') return this.inlineTable(this.nested(depth));
    // Numbers, booleans, dates and times; a date and a time may be separated by one space.
    this.token(/^[A-Za-z0-9_:.+-]+(?: \d[0-9:.+Z-]*)?/, 'expected a value');
    return undefined;
  }

  /** An array; its items are kept while every one of them is a one-line string. */
  private array(depth: number): string[] | undefined {
    this.at++;
    let strings: string[] | undefined = [];
    for (;;) {
      this.skipBlank();
      if (this.char() === ']') break;
      const item = this.value(depth);
      if (typeof item === 'string') strings?.push(item);
      else strings = undefined;
      this.skipBlank();
      if (this.char() === ',') this.at++;
      else if (this.char() !== ']') this.fail('expected , or ] in an array');
    }
    this.at++;
    return strings;
  }

  private inlineTable(depth: number): undefined {
    this.at++;
    for (;;) {
      this.skipBlank();
      if (this.char() === '}') break;
      this.key();
      if (this.char() !== '=') this.fail('expected = in an inline table');
      this.at++;
      this.skipSpaces();
      this.value(depth);
      this.skipBlank();
      if (this.char() === ',') this.at++;
      else if (this.char() !== '}') this.fail('expected , or } in an inline table');
    }
    this.at++;
    return undefined;
  }

  /** The depth inside one more array or inline table, refused past MAX_NESTING. */
  private nested(depth: number): number {
    if (depth >= MAX_NESTING) this.fail(`arrays and inline tables nested more than ${MAX_NESTING} deep`, NestedTooDeep);
    return depth + 1;
  }

  /** A bare key or a scalar: what `pattern` matches at the cursor, within TOKEN_WINDOW characters. */
  private token(pattern: RegExp, expected: string): string {
    const token = pattern.exec(this.text.slice(this.at, this.at + TOKEN_WINDOW))?.[0];
    if (!token) return this.fail(expected);
    this.at += token.length;
    return token;
  }

  // ---- strings -----------------------------------------------------------------------------

  /** "...", escapes decoded; it must close on its line. */
  private basicString(): string {
    this.at++;
    let value = '';
    for (;;) {
      const char = this.char();
      if (char === undefined || char === '\n') this.fail('a string is not closed on its line');
      if (char === '"') break;
      if (char === '\\') {
        value += unescapeAt(this.text, this.at, this.fail);
        this.at += escapeLength(this.text, this.at);
        continue;
      }
      value += char;
      this.at++;
    }
    this.at++;
    return value;
  }

  /** '...', as written; it must close on its line. */
  private literalString(): string {
    const close = this.text.indexOf("'", this.at + 1);
    // Only up to the quote: a search for the next newline went to the line's end for every string,
    // so a long line of many strings took time growing with its length squared.
    if (close < 0 || this.text.slice(this.at + 1, close).includes('\n')) this.fail('a string is not closed on its line');
    const value = this.text.slice(this.at + 1, close);
    this.at = close + 1;
    return value;
  }

  /** """...""" or '''...''', skipped to its end (its text is not needed). */
  private multilineString(quote: '"""' | "'''"): undefined {
    this.at += 3;
    for (;;) {
      if (this.at >= this.text.length) this.fail(`a ${quote} string is never closed`);
      if (quote === '"""' && this.char() === '\\') this.at += 2;
      else if (this.peek(quote)) {
        this.at += 3;
        // Up to two quotes right before the closing three belong to the string.
        for (let extra = 0; extra < 2 && this.char() === quote[0]; extra++) this.at++;
        return undefined;
      } else this.at++;
    }
  }

  // ---- blanks, comments and line ends ------------------------------------------------------

  private skipSpaces(): void {
    while (this.char() === ' ' || this.char() === '\t') this.at++;
  }

  private skipComment(): void {
    if (this.char() === '#') while (this.at < this.text.length && this.char() !== '\n') this.at++;
  }

  /** Spaces, newlines and comments, as arrays and inline tables allow between their items. */
  private skipBlank(): void {
    for (;;) {
      this.skipSpaces();
      if (this.char() === '#') this.skipComment();
      else if (this.peek('\r\n')) this.at += 2;
      else if (this.char() === '\n') this.at++;
      else return;
    }
  }

  /** Whether nothing but a comment is left on the line (or in the file). */
  private atLineEnd(): boolean {
    return this.char() === '#' || this.char() === '\n' || this.peek('\r\n') || this.at >= this.text.length;
  }

  /** After a statement: blanks, a comment, then the newline or the end of the file. */
  private endOfLine(): void {
    this.skipSpaces();
    this.skipComment();
    if (this.peek('\r\n')) this.at += 2;
    else if (this.char() === '\n') this.at++;
    else if (this.at < this.text.length) this.fail(`unexpected ${quoted(this.char() as string)} after a complete statement`);
  }

  // ---- the cursor --------------------------------------------------------------------------

  private char(): string | undefined {
    return this.text[this.at];
  }

  private peek(token: string): boolean {
    return this.text.startsWith(token, this.at);
  }

  /** Refuses the file, saying on which line (an arrow function: it is handed to unescapeAt). */
  private readonly fail = (message: string, kind: typeof TomlSyntax = TomlSyntax): never => {
    throw new kind(`line ${this.text.slice(0, this.at).split('\n').length}: ${message}`);
  };
}

function escapeLength(text: string, at: number): number {
  const kind = text[at + 1];
  return kind === 'u' ? 6 : kind === 'U' ? 10 : 2;
}

function unescapeAt(text: string, at: number, fail: (message: string) => never): string {
  const kind = text[at + 1] as string;
  if (kind in ESCAPES) return ESCAPES[kind] as string;
  const hex = kind === 'u' ? text.slice(at + 2, at + 6) : kind === 'U' ? text.slice(at + 2, at + 10) : '';
  if (!hex || !/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== (kind === 'u' ? 4 : 8)) return fail(`an unknown escape \\${kind}`);
  // TOML allows Unicode scalar values only; past U+10FFFF String.fromCodePoint throws a RangeError.
  const codePoint = parseInt(hex, 16);
  if (codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) return fail(`an escape \\${kind}${hex} that is not a Unicode character`);
  return String.fromCodePoint(codePoint);
}
