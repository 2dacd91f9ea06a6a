// Tool results: a read's data (paged for lists), and the last step every answer
// passes, whatever it is: the key redacted in every form, then the size capped. Nothing reaches
// the model without passing through finishAnswer. The key is redacted once: an answer built from
// scrubbed data (every string redacted as it was cleaned) is only capped there.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Operation } from '../model/types.js';
import type { Redact } from '../safe/redact.js';
import type { Caller } from './context.js';
import type { StreamedList } from '../upstream/stream-list.js';
import { CUSTOMER_TEXT_NOTICE, MAX_ANSWER_CHARS, fitData, fitValue, jsonLength, shapeList, type ListShape, type Scrub } from '../safe/render.js';
import { setField } from '../safe/sanitize.js';
import { previewTooLarge } from './outcomes.js';

/** Answers whose every string is already redacted: their data by the caller's scrub, our own words by its redact. */
const redactedAnswers = new WeakSet<CallToolResult>();

/** The JSON length of an answer's structured content, where it was worked out as the answer was built (a list's records are measured once). */
const structuredLengths = new WeakMap<CallToolResult, number>();

/** The structured content's JSON length as measured while the answer was built, if it was (exported for its test). */
export function knownStructuredLength(result: CallToolResult): number | undefined {
  return structuredLengths.get(result);
}

/** Marks an answer built from scrubbed data and our own fixed words as redacted, so finishAnswer does not redact it again. */
export function alreadyRedacted(result: CallToolResult): CallToolResult {
  redactedAnswers.add(result);
  return result;
}

export function readAnswer(op: Operation, data: unknown, args: ListShape, caller: Pick<Caller, 'scrub' | 'redact'>): CallToolResult {
  // Notes may quote the call's own arguments (field names), so they are redacted here.
  const result = shapedAnswer(op, data, args, caller.scrub, caller.redact);
  const notes = (result.structuredContent as { notes?: string[] } | undefined)?.notes;
  if (notes?.some((note) => caller.redact(note) !== note)) return result;
  return alreadyRedacted(result);
}

/** `redact`: the caller's key redactor, which search and projection never see past (see shapeList). */
function shapedAnswer(op: Operation, data: unknown, args: ListShape, scrub: Scrub, redact?: Redact): CallToolResult {
  const notes = op.customerText ? [CUSTOMER_TEXT_NOTICE] : [];
  if (op.list && (Array.isArray(data) || isStreamedList(data))) {
    const shaped = isStreamedList(data) ? data.shaped({ scrub }) : shapeList(data, args, op.list.idField, { scrub, ...(redact ? { redact } : {}) });
    const { page } = shaped;
    // A search naming a field no record has is told so by shapePage (render.ts); this one is for fields that are there.
    const fieldAbsent = shaped.notes.some((note) => note.startsWith('No record has the field'));
    notes.push(
      ...shaped.notes,
      ...comparisonNote(args.search),
      ...(fieldAbsent ? [] : wholeValueNote(args.search, page)),
      ...listedFieldsNote(args.search, page),
    );
    const next = page.nextOffset !== undefined ? ` Next page: offset ${page.nextOffset}.` : ' No more records.';
    const head = `${op.id}: ${pageRange(page)}.${next}`;
    const text = [head, ...notes, ...shaped.itemsJson].join('\n');
    const structuredContent = { operationId: op.id, data: shaped.items, page, ...(notes.length ? { notes } : {}) };
    const result: CallToolResult = { content: [{ type: 'text', text }], structuredContent };
    const itemsLength = shaped.itemsJson.reduce((sum, json) => sum + json.length + 1, 0) - Math.min(1, shaped.itemsJson.length);
    structuredLengths.set(result, jsonLength({ ...structuredContent, data: [] }) + itemsLength);
    return result;
  }
  const ignoredShaping = (['limit', 'offset', 'fields', 'search'] as const).filter((key) => args[key] !== undefined);
  if (ignoredShaping.length > 0) notes.push(`${ignoredShaping.join(', ')} apply to list operations only and were ignored.`);
  if (op.list) notes.push('The API returned this list as something other than an array; shown as it came.');
  const fitted = fitData(data, { scrub });
  notes.push(...fitted.notes);
  const text = [`${op.id}:`, ...notes, JSON.stringify(fitted.data ?? null)].join('\n');
  return {
    content: [{ type: 'text', text }],
    structuredContent: { operationId: op.id, data: fitted.data ?? null, ...(notes.length ? { notes } : {}) },
  };
}

/**
 * A search word written as a comparison (`lastMessageAt<2026-11-22`, `status=open`) is looked for
 * as text and matches nothing it was meant to: without this note, "none of the 5 matches" reads as
 * "no ticket is older than a week". Only the field and operator are shown back.
 */
function comparisonNote(search: string | undefined): string[] {
  const compared = (search ?? '')
    .trim()
    .split(/\s+/)
    .flatMap((word) => /^([A-Za-z_][\w.-]{0,60})(<=|>=|!=|==|<|>|=)/.exec(word)?.slice(1, 3).join('') ?? []);
  if (compared.length === 0) return [];
  // Each quoted on its own (as the fields note does, review10): words joined bare could spell a form of the key no one word holds.
  const words = [...new Set(compared)].slice(0, 5).map((word) => JSON.stringify(word));
  const which = words.length === 1 ? `the word beginning ${words[0]} was` : `the words beginning ${words.join(', ')} were`;
  return [
    `The search has no comparisons: ${which} looked for as text, not compared, so this page is not what it asked for. field:value is the one form that names a field (equals); to compare dates or numbers, read the list without such a word and compare the values yourself.`,
  ];
}

/**
 * A field:value word equals a whole value: `customerName:Bayu Nasution` (or with quotes) looks for
 * a name "Bayu" and the word "nasution", `lastMessageAt:2026-08-27` for a value with no time. Said
 * when a search with one matched nothing in a list that has records, lest "none" be taken as the
 * answer.
 */
function wholeValueNote(search: string | undefined, page: { total: number; matched: number }): string[] {
  if (page.matched > 0 || page.total === 0 || !/(^|\s)[\w.-]+:\S/.test(search ?? '')) return [];
  return [
    'A field:value word matches only a field whose whole value is that word (case aside): a space ends the word, quotes are taken as part of it, and part of a value does not match (name:budi does not find “Budi Santoso”, a date does not find a date with a time). To find part of a value, search for that part as a word of its own.',
  ];
}

/**
 * A plain search word is looked for in the fields the list gives each record, and nowhere else: a
 * ticket list holds no messages, so "Batik Tulis" matched none of the tickets whose customers asked
 * about it, and a model told the person no one had. Said when such a search matched nothing in a
 * list that has records.
 */
function listedFieldsNote(search: string | undefined, page: { total: number; matched: number }): string[] {
  const plainWord = (search ?? '').split(/\s+/).some((word) => word !== '' && !/^[\w.-]+:\S/.test(word) && !/^[A-Za-z_][\w.-]{0,60}(<|>|=|!=)/.test(word));
  if (page.matched > 0 || page.total === 0 || !plainWord) return [];
  return [
    "The search looked only in the fields this list gives each record; what a record holds beyond them (a ticket's messages, for one) was not searched, so that none matches here does not show that no record mentions it.",
  ];
}

/**
 * Which records a page holds. Filtered, the page and its offset count the matches, so the range is
 * said of them ("records 4–6 of the 8 that match the filter (40 in all)"), not of the whole list,
 * which a model would read as 40 records it can page through.
 */
function pageRange(page: { total: number; matched: number; offset: number; returned: number }): string {
  const range = page.returned === 0 ? 'no records' : `records ${page.offset + 1}–${page.offset + page.returned}`;
  if (page.matched === page.total) return `${range} of ${page.total}`;
  if (page.matched === 0) return `no records: none of the ${page.total} matches the filter`;
  return `${range} of the ${page.matched} that ${page.matched === 1 ? 'matches' : 'match'} the filter (${page.total} in all)`;
}

const CUT_MARK = '…[cut: the answer size limit]';

/**
 * The last step of every answer (results, errors, previews): the key redacted in every string,
 * then the whole kept within MAX_ANSWER_CHARS, text and structured content together.
 */
export function finishAnswer(result: CallToolResult, redact: Redact): CallToolResult {
  const redacted = redactedAnswers.has(result);
  const content = redacted ? result.content : result.content.map((part) => (part.type === 'text' ? { ...part, text: redact(part.text) } : part));
  let structured: Record<string, unknown> | undefined =
    result.structuredContent === undefined || redacted
      ? (result.structuredContent as Record<string, unknown> | undefined)
      : (mapStrings(result.structuredContent, redact) as Record<string, unknown>);
  const textLength = content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0);
  const structuredLength = structured === undefined ? 0 : ((redacted ? knownStructuredLength(result) : undefined) ?? jsonLength(structured));
  if (textLength + structuredLength <= MAX_ANSWER_CHARS) return { ...result, content, ...(structured ? { structuredContent: structured } : {}) };
  if (structured?.outcome === 'preview') return previewTooLarge(structured.operationId);

  // Too large (an error quoting a huge input, say): each half gets half the room.
  const textRoom = (structured === undefined ? MAX_ANSWER_CHARS : Math.floor(MAX_ANSWER_CHARS / 2)) - CUT_MARK.length - 100;
  if (structured !== undefined) structured = fitValue(structured, Math.floor(MAX_ANSWER_CHARS / 2)) as Record<string, unknown>;
  let room = textRoom;
  const cutContent = content.map((part) => {
    if (part.type !== 'text') return part;
    const text = part.text.length <= room ? part.text : `${part.text.slice(0, Math.max(0, room))}${CUT_MARK}`;
    room = Math.max(0, room - part.text.length);
    return { ...part, text };
  });
  return { ...result, content: cutContent, ...(structured ? { structuredContent: structured } : {}) };
}

/** A copy with `map` applied to every string and key; our own answers are shallow, and data in them was already bounded by cleaning. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((inner) => mapStrings(inner, map));
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) setField(out, map(key), mapStrings(inner, map));
  return out;
}

/** A list read as a stream (stream-list.ts, loaded on the first list read): parsed JSON never holds a function. */
function isStreamedList(data: unknown): data is StreamedList {
  return typeof data === 'object' && data !== null && typeof (data as { shaped?: unknown }).shaped === 'function';
}
