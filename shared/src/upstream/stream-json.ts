// A scanner for the API's envelope, fed the body's text in pieces as it arrives: it finds the
// top-level `"data": [` and hands each record of that array over as its exact text (for the
// native JSON.parse, by far the fastest parser), keeping everything else of the envelope (status,
// errorCode, message, any other key) as a skeleton whose `data` is `null`. It does not validate:
// the body is valid JSON exactly when the skeleton and every record parse (an empty record, a
// stray bracket or an unclosed string makes one of them fail), so the caller parses both.
//
// Strings are skipped with indexOf (a quote preceded by an even run of backslashes ends one),
// nesting is counted outside strings, and every state (inside a string, a run of backslashes, a
// record's start, a key's text) carries across piece boundaries.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

// biome-ignore lint/suspicious/noConstEnum: private to this file, so esbuild inlines it into the scanner's hot loop
const enum Mode {
  /** Before the envelope's first character. */
  Start,
  /** Inside the envelope object, outside the streamed array. */
  Envelope,
  /** Between or inside the records of the streamed array. */
  Records,
  /** The body is not an object, or its object has ended: kept whole, not scanned. */
  Rest,
}

const MAX_BATCH_FAILURES = 4;
/** A record longer than this (characters) is scanned, not searched again for `},{` with every piece. */
const MAX_BATCH_CARRIED = 256 * 1024;

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

export interface ScanResult {
  /** The body with the streamed array replaced by `null`; the whole body when nothing was streamed. */
  skeleton: string;
  /** Whether a top-level `data` array was streamed (its records went to onRecord). */
  streamed: boolean;
  /** A top-level `data` key came after the streamed one: the last one wins, as in JSON.parse. */
  dataRepeated: boolean;
  /** The array's structure was broken (a stray closing bracket, an empty record): not valid JSON. */
  broken: boolean;
}

export class EnvelopeScanner {
  private mode = Mode.Start;
  private skeleton = '';
  private streamed = false;
  private dataRepeated = false;
  private broken = false;

  // Inside a string (in the envelope or a record), and whether a run of backslashes left at the
  // end of the last piece was odd (so the next character is escaped).
  private inString = false;
  private oddBackslashes = false;
  /** Envelope nesting: 1 is the envelope object itself. */
  private depth = 0;
  /** Envelope, depth 1: the next string is a key. */
  private expectKey = false;
  /** Envelope, depth 1: a key's text so far, while it is being read. */
  private keyText: string | undefined;
  /** Envelope, depth 1: the value after this key is next; `data` is the one streamed. */
  private valueOfData = false;
  private afterColon = false;

  /** Records: nesting inside the current record (0: between records, at the array's level). */
  private nesting = 0;
  /** Records: text of the current record carried from earlier pieces. */
  private carried = '';
  /** Records: how many separators (commas) were seen; `[ ]` is empty, `[ , ]` is broken. */
  private commas = 0;
  /** Batches that did not parse (a `},{` inside a string, say): past a few, every record is scanned. */
  private batchFailures = 0;

  /**
   * `onBatch`, when given, may take many records at once: the text from a record's start to the
   * last `},{` of what has arrived, handed over only if it parses as the records of an array (it
   * returns false otherwise, and is then not to have kept anything). When it does parse, it ends at
   * a record boundary: an end inside a string or inside a record does not parse. Otherwise the
   * text is scanned record by record as usual. This spares the scan for the common compact list
   * of objects, when the caller needs no record's own text.
   */
  constructor(
    private readonly onRecord: (text: string) => void,
    private readonly onBatch?: (text: string) => boolean,
  ) {}

  write(text: string): void {
    if (this.broken) return;
    let piece = text;
    let index = 0;
    while (index < piece.length && !this.broken) {
      if (this.mode === Mode.Records && this.onBatch && this.batchFailures < MAX_BATCH_FAILURES && this.carried.length < MAX_BATCH_CARRIED) {
        // What was carried is the current record's start; the scan left off at its end.
        const resume = this.carried.length;
        piece = this.carried + (index === 0 ? piece : piece.slice(index));
        this.carried = '';
        const after = this.batch(piece);
        if (after > 0) {
          // Right after the comma that ends the batch: between records, at the array's level.
          this.nesting = 0;
          this.inString = false;
          this.oddBackslashes = false;
          index = this.records(piece, after, after);
        } else index = this.records(piece, resume, 0);
        continue;
      }
      switch (this.mode) {
        case Mode.Start:
          index = this.start(piece, index);
          break;
        case Mode.Envelope:
          index = this.envelope(piece, index);
          break;
        case Mode.Records:
          index = this.records(piece, index);
          break;
        case Mode.Rest:
          this.skeleton += index === 0 ? piece : piece.slice(index);
          index = piece.length;
          break;
      }
    }
  }

  /** Runs `flush` (which takes the records handed over so far), a failure of it marking the body broken. */
  deliver(flush: () => void): void {
    if (this.broken) return;
    try {
      flush();
    } catch {
      this.broken = true;
    }
  }

  end(): ScanResult {
    if (this.mode === Mode.Records) this.broken = true; // an array never closed: truncated
    return { skeleton: this.skeleton, streamed: this.streamed, dataRepeated: this.dataRepeated, broken: this.broken };
  }

  /** The index after the comma that ends the batch taken, or 0 when none was. */
  private batch(piece: string): number {
    const last = piece.lastIndexOf('},{');
    if (last < 0) return 0;
    let taken: boolean;
    try {
      taken = (this.onBatch as (text: string) => boolean)(piece.slice(0, last + 1));
    } catch {
      taken = false;
    }
    if (!taken) {
      this.batchFailures++;
      return 0;
    }
    this.commas++;
    return last + 2;
  }

  private start(piece: string, index: number): number {
    let at = index;
    while (at < piece.length && isSpace(piece.charCodeAt(at))) at++;
    if (at === piece.length) {
      this.skeleton += piece.slice(index);
      return at;
    }
    if (piece.charCodeAt(at) === OPEN_BRACE) {
      this.skeleton += piece.slice(index, at + 1);
      this.mode = Mode.Envelope;
      this.depth = 1;
      this.expectKey = true;
      return at + 1;
    }
    this.mode = Mode.Rest;
    return index;
  }

  /** Skips string content from `at`; returns the index after the closing quote, or -1 if the string goes on past this piece. */
  private skipString(piece: string, at: number): number {
    let from = at;
    for (;;) {
      const quote = piece.indexOf('"', from);
      if (quote < 0) {
        let run = piece.length;
        while (run > from && piece.charCodeAt(run - 1) === BACKSLASH) run--;
        const odd = ((piece.length - run) & 1) === 1;
        this.oddBackslashes = run === from && from === at ? this.oddBackslashes !== odd : odd;
        return -1;
      }
      let run = quote;
      while (run > from && piece.charCodeAt(run - 1) === BACKSLASH) run--;
      let odd = ((quote - run) & 1) === 1;
      if (run === from && from === at && this.oddBackslashes) odd = !odd;
      this.oddBackslashes = false;
      if (!odd) return quote + 1;
      from = quote + 1;
    }
  }

  private envelope(piece: string, index: number): number {
    let at = index;
    const length = piece.length;
    while (at < length) {
      if (this.inString) {
        at = this.envelopeStringEnd(piece, index, at);
        if (at < 0) return length;
        continue;
      }
      const code = piece.charCodeAt(at);
      if (isSpace(code)) {
        at++;
        continue;
      }
      if (this.depth === 1 && this.afterColon && this.dataArrayStarts(piece, index, at, code)) return at + 1;
      if (code === QUOTE) {
        this.inString = true;
        this.oddBackslashes = false;
        if (this.depth === 1 && this.expectKey) {
          this.expectKey = false;
          this.keyText = '"';
        }
        at++;
        continue;
      }
      if (code === OPEN_BRACE || code === OPEN_BRACKET) this.depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth === 0) {
          this.skeleton += piece.slice(index, at + 1);
          this.mode = Mode.Rest;
          return at + 1;
        }
      } else if (this.depth === 1) {
        if (code === COMMA) this.expectKey = true;
        else if (code === COLON) this.afterColon = true;
      }
      at++;
    }
    this.skeleton += piece.slice(index);
    return length;
  }

  /** Inside a string of the envelope: where it ends (a top-level key's text is kept), or -1 when the piece ends first. */
  private envelopeStringEnd(piece: string, index: number, at: number): number {
    const end = this.skipString(piece, at);
    if (end < 0) {
      if (this.keyText !== undefined) this.keyText += piece.slice(at);
      this.skeleton += piece.slice(index);
      return -1;
    }
    this.inString = false;
    if (this.keyText !== undefined) {
      this.keyText += piece.slice(at, end);
      this.valueOfData = isDataKey(this.keyText);
      this.keyText = undefined;
    }
    return end;
  }

  /** The first character of a top-level value: true when it opens the `data` array, whose records are streamed from here. */
  private dataArrayStarts(piece: string, index: number, at: number, code: number): boolean {
    this.afterColon = false;
    if (!this.valueOfData) return false;
    this.valueOfData = false;
    if (this.streamed) this.dataRepeated = true;
    else if (code === OPEN_BRACKET) {
      this.skeleton += `${piece.slice(index, at)}null`;
      this.mode = Mode.Records;
      this.streamed = true;
      this.nesting = 0;
      this.carried = '';
      this.commas = 0;
      return true;
    }
    return false;
  }

  /** Scans from `index`; the current record's text in this piece begins at `start`. */
  private records(piece: string, index: number, start = index): number {
    let at = index;
    const length = piece.length;
    let nesting = this.nesting;
    while (at < length) {
      if (this.inString) {
        const end = this.skipString(piece, at);
        if (end < 0) {
          at = length;
          break;
        }
        this.inString = false;
        at = end;
        continue;
      }
      const code = piece.charCodeAt(at);
      if (code === QUOTE) {
        this.inString = true;
        this.oddBackslashes = false;
        at++;
      } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
        nesting++;
        at++;
      } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        if (nesting > 0) {
          nesting--;
          at++;
          continue;
        }
        if (code === CLOSE_BRACE) {
          this.broken = true;
          return length;
        }
        // The array's end: its last record (none in `[ ]`).
        const text = this.take(piece, start, at);
        if (this.commas > 0 || !isBlank(text)) this.emit(text);
        this.nesting = 0;
        this.mode = Mode.Envelope;
        return at + 1;
      } else if (code === COMMA && nesting === 0) {
        this.commas++;
        this.emit(this.take(piece, start, at));
        if (this.broken) return length;
        at++;
        start = at;
      } else at++;
    }
    this.nesting = nesting;
    this.carried += piece.slice(start);
    return length;
  }

  private take(piece: string, start: number, end: number): string {
    if (this.carried === '') return piece.slice(start, end);
    const text = this.carried + piece.slice(start, end);
    this.carried = '';
    return text;
  }

  private emit(text: string): void {
    if (isBlank(text)) {
      this.broken = true; // `[1,,2]`, `[1,]`, `[,1]`
      return;
    }
    try {
      this.onRecord(text);
    } catch {
      this.broken = true;
    }
  }
}

function isBlank(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (!isSpace(text.charCodeAt(index))) return false;
  return true;
}

function isDataKey(text: string): boolean {
  if (text === '"data"') return true;
  if (text.length > 64 || !text.includes('\\')) return false;
  try {
    return JSON.parse(text) === 'data';
  } catch {
    return false;
  }
}
