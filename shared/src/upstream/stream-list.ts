// Large list bodies, read as they arrive. The API has no paging, so a list call downloads the whole
// list; past STREAM_THRESHOLD_BYTES its records are parsed a piece of the body at a time as it
// arrives (see stream-json.ts) and `search`, `fields`, `offset` and `limit` applied on the fly,
// so only the page and the counts are
// kept: a tenant of 200,000 contacts costs about what one of 20,000 does. The answer is exactly
// the simple path's (parse the whole body, then shapeList): the same page, counts and notes, and
// the same failures for a body that is not JSON or not the envelope (api-client.ts decides on those,
// from the skeleton this gives it).
import { StringDecoder } from 'node:string_decoder';
import { parseJson, type BodySink } from './api-client.js';
import type { Redact } from '../safe/redact.js';
import {
  dropFieldsHeld,
  pageBounds,
  parseSearch,
  searchFieldNames,
  searchWords,
  shapePage,
  shownShape,
  usableFields,
  type ListShape,
  type ShapeOptions,
  type ShapedList,
} from '../safe/render.js';
import { nextHidden } from '../safe/sanitize.js';
import { EnvelopeScanner } from './stream-json.js';

/**
 * Smaller bodies are read whole and parsed at once, as before: the simple path, with no state
 * carried between pieces. Past this the stream was measured at least as fast as reading whole
 * (20,040 contacts, 3.4 MB: about the same; 200,040: about half the time), at a flat peak.
 */
export const STREAM_THRESHOLD_BYTES = 1024 * 1024;
/**
 * Of a streamed body that turns out not to be JSON, this much text is kept for the log line and
 * the description of the body (the logger keeps 32,000 characters of a message).
 */
const HEAD_CHARS = 64 * 1024;

/**
 * A list's page and counts, filled with the records' texts as they come (add), parsed a piece at a
 * time (flush: one JSON.parse of the records a piece of the body completed, measured faster than
 * one per record); shaped() gives exactly what shapeList gives over the whole list. flush() throws
 * when a record is not valid JSON: records joined by commas in an array parse exactly when each does.
 */
export class StreamedList {
  total = 0;
  matched = 0;
  private readonly page: unknown[] = [];
  private readonly terms: ReturnType<typeof parseSearch>;
  /** Per search word: the lower-case text a record's JSON must contain to possibly match, or undefined. */
  private readonly rawNeedles: string[];
  private readonly offset: number;
  private readonly end: number;
  /** The fields `fields` asks for that no matching record seen so far has. */
  private readonly unknownFields: Set<string>;
  /** The fields the search names, and those of them no record seen so far has (said when nothing matched). */
  private readonly searchFields: string[];
  private readonly absentSearchFields: Set<string>;
  private pending: string[] = [];

  /** `redact`: the caller's key redactor, so search and projection never match a key form, as in shapeList. */
  private readonly shape: ListShape;

  constructor(
    asked: ListShape,
    private readonly idField: string | undefined,
    private readonly redact?: Redact,
  ) {
    const shape = shownShape(asked);
    this.shape = shape;
    const { limit, offset } = pageBounds(shape);
    this.offset = offset;
    this.end = offset + limit;
    this.terms = parseSearch(shape.search ?? '', redact);
    this.rawNeedles = searchWords(shape.search ?? '')
      .map((word) => ('field' in word ? word.expected.toLowerCase() : word.needle))
      .filter(canPrefilter);
    this.unknownFields = new Set(usableFields(shape.fields, redact));
    this.searchFields = searchFieldNames(shape.search, redact);
    this.absentSearchFields = new Set(this.searchFields);
  }

  add(text: string): void {
    this.pending.push(text);
  }

  /** Records joined by commas: taken (true) if they parse, else left for the scan (false). */
  addBatch(text: string): boolean {
    let items: unknown[];
    try {
      items = JSON.parse(`[${text}]`) as unknown[];
    } catch {
      return false;
    }
    let candidates: Uint8Array | undefined;
    if (this.terms.length > 0 && this.rawNeedles.length > 0) {
      const starts = objectStarts(text, items);
      if (starts) candidates = mayMatch(text, starts, this.rawNeedles);
    }
    this.take(items, candidates);
    return true;
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const texts = this.pending;
    this.pending = [];
    // Every record is parsed, shown or not: that is what checks the body is JSON.
    const joined = texts.length === 1 ? (texts[0] as string) : texts.join(',');
    const items = JSON.parse(`[${joined}]`) as unknown[];
    if (items.length !== texts.length) throw new Error('a record was not one JSON value');
    this.take(items, this.terms.length > 0 && this.rawNeedles.length > 0 ? mayMatch(joined, startsOf(texts), this.rawNeedles) : undefined);
  }

  /** Counts, filters and pages parsed records; `candidates` marks those the raw prefilter let through. */
  private take(items: unknown[], candidates: Uint8Array | undefined): void {
    const searching = this.terms.length > 0;
    for (let index = 0; index < items.length; index++) {
      const item = items[index];
      this.total++;
      // Said only when nothing matched: once a record did, no record's fields need reading for it.
      if (this.matched === 0 && this.absentSearchFields.size > 0) dropFieldsHeld(item, this.absentSearchFields);
      if (searching) {
        if (candidates !== undefined && candidates[index] === 0) continue;
        if (!this.terms.every((term) => term(item))) continue;
      }
      const position = this.matched++;
      if (this.unknownFields.size > 0) dropFieldsHeld(item, this.unknownFields);
      if (position >= this.offset && position < this.end) this.page.push(item);
    }
  }

  shaped(options: ShapeOptions = {}): ShapedList {
    const usable = usableFields(this.shape.fields, this.redact);
    const unknownFields = this.shape.fields ? this.shape.fields.filter((field) => !usable.includes(field) || this.unknownFields.has(field)) : [];
    const withRedact = this.redact ? { redact: this.redact, ...options } : options;
    const absentSearchFields = this.matched === 0 ? this.searchFields.filter((field) => this.absentSearchFields.has(field)) : [];
    return shapePage(this.page, { total: this.total, matched: this.matched, unknownFields, absentSearchFields }, this.shape, this.idField, withRedact);
  }
}

/**
 * Whether a search word can be looked for in a record's raw JSON first: only text that no number
 * (its String form: digits, `.`, `e`, `+`, `-`, `Infinity`) and no object (`[object Object]`)
 * could show, with no `[` or backslash, and ASCII, so lower-casing the whole record's JSON finds it wherever lower-casing a
 * string of it would.
 */
function canPrefilter(needle: string): boolean {
  if (needle === '' || !/^[\x20-\x7e]+$/.test(needle)) return false;
  // A `[` or a backslash may be one the model is shown and the raw JSON lacks (an escaped marker's
  // shape, sanitize.ts shownText), or the reverse (JSON escapes a backslash): no prefilter.
  if (needle.includes('[') || needle.includes('\\')) return false;
  if (/^[0-9.e+-]+$/.test(needle)) return false;
  return !'-infinity'.includes(needle) && !'[object object]'.includes(needle);
}

/**
 * Where each record of a batch begins (and, last, the batch's length + 1), when that can be told
 * without a scan: when every record is an object, no `}` is followed by a blank and no `},` by a
 * blank (so no boundary has blanks in it), and the batch has exactly one `},{` per boundary. Every
 * boundary between objects is then such a `},{`, and there are as many as boundaries, so none is
 * inside a string. Otherwise undefined (no prefilter).
 */
function objectStarts(batch: string, items: unknown[]): Int32Array | undefined {
  for (const item of items) if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
  const starts = new Int32Array(items.length + 1);
  let count = 1;
  // Every `}`: followed by a blank, or by a comma and a blank, there may be a boundary with blanks.
  for (let at = batch.indexOf('}'); at >= 0; at = batch.indexOf('}', at + 1)) {
    const next = batch.charCodeAt(at + 1);
    if (next !== COMMA) {
      if (isBlank(next)) return undefined;
      continue;
    }
    const after = batch.charCodeAt(at + 2);
    if (after === OPEN_BRACE) {
      if (count === items.length) return undefined;
      starts[count++] = at + 2;
    } else if (isBlank(after)) return undefined;
  }
  if (count !== items.length) return undefined;
  starts[count] = batch.length + 1;
  return starts;
}
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const isBlank = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** Where each of `texts` begins when they are joined by commas (and, last, the joined length + 1). */
function startsOf(texts: string[]): Int32Array {
  const starts = new Int32Array(texts.length + 1);
  for (let index = 0, at = 0; index < texts.length; index++) {
    starts[index] = at;
    at += (texts[index] as string).length + 1;
  }
  starts[texts.length] = starts[texts.length - 1]! + (texts[texts.length - 1] as string).length + 1;
  return starts;
}

/**
 * Which records may match (1) and which cannot (0): a record cannot when its JSON has no escape
 * (so its strings stand there as they are) and no character cleaning removes (so they are shown
 * as they stand: a name sent as "bu\u200bdi" raw is shown, and searched, as "budi") and,
 * lower-cased, lacks one of the needles. Worked out
 * over the records joined (one toLowerCase and a few indexOf for the lot); when lower-casing
 * changes the length (a few non-ASCII letters do), record by record.
 */
function mayMatch(joined: string, starts: Int32Array, needles: string[]): Uint8Array {
  const count = starts.length - 1;
  const lower = joined.toLowerCase();
  const result = new Uint8Array(count);
  if (lower.length !== joined.length) {
    for (let index = 0; index < count; index++) {
      const text = joined.slice(starts[index], (starts[index + 1] as number) - 1);
      const lowerText = text.toLowerCase();
      result[index] = text.includes('\\') || nextHidden(text) >= 0 || needles.every((needle) => lowerText.includes(needle)) ? 1 : 0;
    }
    return result;
  }
  const recordAt = (position: number, from: number) => {
    let record = from;
    while ((starts[record + 1] as number) <= position) record++;
    return record;
  };
  const hits = new Uint16Array(count);
  needles.forEach((needle, order) => {
    let record = 0;
    for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
      record = recordAt(at, record);
      // Counted once per needle: only a record every earlier needle was found in moves on.
      if (hits[record] === order) hits[record] = order + 1;
    }
  });
  for (let index = 0; index < count; index++) if (hits[index] === needles.length) result[index] = 1;
  let record = 0;
  for (let at = joined.indexOf('\\'); at >= 0; at = joined.indexOf('\\', at + 1)) {
    record = recordAt(at, record);
    result[record] = 1;
  }
  record = 0;
  for (let at = nextHidden(joined); at >= 0; at = nextHidden(joined, at + 1)) {
    record = recordAt(at, record);
    result[record] = 1;
  }
  return result;
}

/**
 * The body reader for a list operation: reads small bodies whole, and past `threshold` bytes
 * switches to streaming its `data` records into a StreamedList. What it ends with is either the
 * text (read whole) or the envelope parsed with its data streamed (`parsed`, undefined when the
 * body is not JSON; `text` then has its beginning, for the log and the description).
 */
export function listBodyReader(shape: ListShape, idField: string | undefined, threshold = STREAM_THRESHOLD_BYTES, redact?: Redact): () => BodySink {
  return () => new ListSink(shape, idField, threshold, redact);
}

class ListSink implements BodySink {
  private chunks: Buffer[] = [];
  private size = 0;
  private stream: { decoder: StringDecoder; scanner: EnvelopeScanner; list: StreamedList } | undefined;
  private head = '';
  private headHasText = false;

  constructor(
    private readonly shape: ListShape,
    private readonly idField: string | undefined,
    private readonly threshold: number,
    private readonly redact: Redact | undefined,
  ) {}

  write(chunk: Buffer): void {
    if (this.stream) {
      this.feed(this.stream.decoder.write(chunk));
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size <= this.threshold) return;
    const list = new StreamedList(this.shape, this.idField, this.redact);
    const scanner = new EnvelopeScanner(
      (text) => list.add(text),
      (text) => list.addBatch(text),
    );
    this.stream = { decoder: new StringDecoder('utf8'), scanner, list };
    const buffered = this.chunks;
    this.chunks = [];
    for (const piece of buffered) this.feed(this.stream.decoder.write(piece));
  }

  end(): { text: string } | { text: string; parsed: unknown } {
    if (!this.stream) return { text: Buffer.concat(this.chunks).toString('utf8') };
    const { decoder, scanner, list } = this.stream;
    this.feed(decoder.end());
    const scan = scanner.end();
    let parsed = scan.broken ? undefined : parseJson(scan.skeleton);
    if (parsed !== undefined && scan.streamed && !scan.dataRepeated && typeof parsed === 'object' && parsed !== null) {
      parsed = Object.assign(parsed, { data: list });
    }
    return { text: this.head, parsed };
  }

  private feed(text: string): void {
    if (text === '' || !this.stream) return;
    if (this.head.length < HEAD_CHARS || !this.headHasText) {
      this.head += text;
      this.headHasText ||= /\S/.test(text);
    }
    this.stream.scanner.write(text);
    this.stream.scanner.deliver(() => this.stream!.list.flush());
  }
}
