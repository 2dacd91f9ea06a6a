// The record of every write: one JSON line per gated or write call, each chained to the one
// before by an HMAC over the previous line's mac and its own content, so a deleted, inserted or
// edited line breaks the chain at that line. Customer text never enters it: params appear as a
// keyed digest and a summary that keeps ids, numbers and switches and only the length of text.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Params } from '../model/types.js';
import { canonicalJson } from './confirmations.js';

/** How the person's yes was given, if one was needed. */
export type ConfirmationPath = 'elicitation' | 'input_required' | 'token' | 'app' | 'not needed';

export interface AuditEntry {
  time: string;
  /** The key's fingerprint, never the key. */
  key: string;
  client?: { name?: string; version?: string };
  server: string;
  operationId: string;
  paramsDigest: string;
  params: Record<string, unknown>;
  confirmation: ConfirmationPath;
  outcome: string;
  apiStatus?: number;
  requestId?: string;
  /** A keyed digest of the call's idempotencyKey (never its text): repeats of one key are recognisable. */
  idempotencyKeyDigest?: string;
  /**
   * The line of a write whose server stopped (killed, crashed) with it at the API, so its own line
   * never came: written later by a server sharing its state (outcome `unknown`, `time` its claim's).
   */
  orphaned?: true;
}

/** A write's audit line but for how it ended, as its claim keeps it with its mark in flight (guardrails.ts pendingAudit). */
export type PendingAudit = Omit<AuditEntry, 'outcome' | 'apiStatus' | 'requestId' | 'orphaned'>;

/**
 * The line of an orphaned write (its server stopped with it at the API) from what its mark kept:
 * outcome `unknown`, `orphaned`; rebuilt field by field, so nothing but a line's fields is appended;
 * undefined for anything that is not such a kept line (a store's file or hash is read back as found).
 */
export function orphanedLine(kept: unknown): AuditEntry | undefined {
  if (typeof kept !== 'object' || kept === null || Array.isArray(kept)) return undefined;
  const { time, key, client, server, operationId, paramsDigest, params, confirmation, idempotencyKeyDigest } = kept as Record<string, unknown>;
  const isText = (value: unknown): value is string => typeof value === 'string';
  if (![time, key, server, operationId, paramsDigest, confirmation].every(isText)) return undefined;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  if (client !== undefined && (typeof client !== 'object' || client === null || Array.isArray(client))) return undefined;
  if (idempotencyKeyDigest !== undefined && !isText(idempotencyKeyDigest)) return undefined;
  const { name, version } = (client ?? {}) as Record<string, unknown>;
  return {
    time: time as string,
    key: key as string,
    ...(client !== undefined ? { client: { ...(isText(name) ? { name } : {}), ...(isText(version) ? { version } : {}) } } : {}),
    server: server as string,
    operationId: operationId as string,
    paramsDigest: paramsDigest as string,
    params: params as Record<string, unknown>,
    confirmation: confirmation as ConfirmationPath,
    outcome: 'unknown',
    ...(isText(idempotencyKeyDigest) ? { idempotencyKeyDigest } : {}),
    orphaned: true,
  };
}

/** Where the chain stands: the last line's sequence number and mac ('' before the first line). */
export interface AuditHead {
  seq: number;
  mac: string;
}

/**
 * Remote mode's audit secret: derived from ENGAGE_STATE_SECRET (the same on every replica) with its
 * own label, so it is never kept in Redis and an operator holding that secret can verify an export.
 */
export function remoteAuditSecret(stateSecret: Uint8Array): Buffer {
  return createHmac('sha256', stateSecret).update('engage-mcp remote audit secret').digest();
}

const macOf = (secret: Uint8Array, prev: string, body: string) =>
  createHmac('sha256', secret).update(`engage-mcp audit\n${prev}\n${body}`).digest('base64url').slice(0, 32);

/** The line to append after `head`, and the head after it. */
export function chainAuditLine(secret: Uint8Array, head: AuditHead, entry: AuditEntry): { line: string; head: AuditHead } {
  const seq = head.seq + 1;
  const body = canonicalJson({ seq, ...entry, prev: head.mac });
  const mac = macOf(secret, head.mac, body);
  return { line: `${body.slice(0, -1)},"mac":${JSON.stringify(mac)}}`, head: { seq, mac } };
}

/**
 * `first`: the record's first line when it does not start at 1 (a capped record whose oldest lines
 * were dropped). `otherSecret`: no line's mac matches, which is what a record chained with another
 * secret looks like (as much as one whose every line was changed).
 */
export type AuditVerdict = { ok: true; lines: number; first?: number } | { ok: false; line: number; why: string; otherSecret?: true };

const CHANGED = 'its content was changed (the mac does not match)';
const NO_MAC_MATCHES =
  "no line's mac matches: the record was chained with another secret (is this the state directory of the servers that wrote it? with --remote, is ENGAGE_STATE_SECRET the service's?), or every line was changed";

/**
 * How many lines remote mode keeps of each key's record (redis-guard-store.ts trims each list to
 * them in the step that appends): an export that begins after line 1 holds exactly these.
 */
export const REMOTE_AUDIT_KEPT_LINES = 10_000;

/**
 * Checks the chain line by line; the first line that does not follow from the one before is named (1-based).
 * `capped`: the record may begin after line 1 (remote mode keeps the newest lines of each key): its
 * first line's own mac is still checked, and every line after it must follow. A number is the cap:
 * a record that begins after line 1 with fewer lines than it lost its first lines otherwise (a
 * `LTRIM` of the list, say), which the cap would not explain.
 */
export function verifyAuditLines(secret: Uint8Array, lines: Iterable<string>, recordedHead?: AuditHead, capped: boolean | number = false): AuditVerdict {
  // Lines are taken as they come (the audit command reads a long record a chunk at a time).
  let head: AuditHead = { seq: 0, mac: '' };
  let first = 1;
  let number = 0;
  // A wrong secret fails every line's mac, as an edit fails one: the first line whose mac does not
  // match is named as changed once any line's does (the secret is right), and only then.
  let unmatched: number | undefined;
  let matched = false;
  for (const line of lines) {
    number += 1;
    if (number === 1 && capped) {
      head = cappedStart(line);
      first = head.seq + 1;
    }
    const parsed = parseLine(line);
    if (typeof parsed === 'string') return { ok: false, line: unmatched ?? number, why: unmatched ? CHANGED : parsed };
    const { mac, seq, prev } = parsed;
    if (prev !== head.mac || seq !== head.seq + 1)
      return { ok: false, line: unmatched ?? number, why: unmatched ? CHANGED : 'does not follow the line before it (a line was removed or inserted here)' };
    if (macChecks(secret, head.mac, line, mac)) matched = true;
    else unmatched ??= number;
    if (matched && unmatched) return { ok: false, line: unmatched, why: CHANGED };
    head = { seq: head.seq + 1, mac: String(mac) };
  }
  if (unmatched) return { ok: false, line: unmatched, why: NO_MAC_MATCHES, otherSecret: true };
  if (recordedHead && recordedHead.seq > head.seq) {
    return { ok: false, line: head.seq + 1, why: `missing: the store recorded ${recordedHead.seq} lines, the file ends after ${head.seq}` };
  }
  if (typeof capped === 'number' && first > 1 && number < capped) {
    const why = `the record's first ${first - 1} lines are missing: it starts at line ${first} and holds ${number}, fewer than the ${capped} the service keeps, so the cap did not drop them`;
    return { ok: false, line: 1, why };
  }
  return first > 1 ? { ok: true, lines: head.seq, first } : { ok: true, lines: head.seq };
}

/** A line's fields, or why it is not a line of the record (any JSON value may be found there: null, a number, a list). */
function parseLine(line: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return 'not a JSON line';
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : 'not a JSON object';
}

/** The head after `line` if it is a line of a chain under `secret` whose own mac checks; undefined for anything else. */
export function headOfLine(secret: Uint8Array, line: string): AuditHead | undefined {
  const parsed = parseLine(line);
  if (typeof parsed === 'string') return undefined;
  const { mac, seq, prev } = parsed;
  if (typeof prev !== 'string' || typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  return macChecks(secret, prev, line, mac) ? { seq, mac: mac as string } : undefined;
}

/**
 * Whether `line` is, character for character, the line chainAuditLine wrote after `prev`: its mac
 * is checked over the text before it, as written. Checked over the parsed fields, a line whose text
 * was edited into another that parses the same passed: a field given twice (`"outcome":"refused"`
 * put before the line's own, which JSON.parse drops but a reader or `grep` sees), blanks, escapes.
 * No parsed value is walked, so a line nested a million deep is just a line whose mac does not match.
 */
function macChecks(secret: Uint8Array, prev: string, line: string, mac: unknown): boolean {
  if (typeof mac !== 'string') return false;
  const ending = `,"mac":${JSON.stringify(mac)}}`;
  if (!line.endsWith(ending)) return false;
  return sameText(mac, macOf(secret, prev, `${line.slice(0, -ending.length)}}`));
}

/** Where a capped record's chain starts: just before its first line, as that line says. */
function cappedStart(line: string | undefined): AuditHead {
  try {
    const { seq, prev } = JSON.parse(line ?? '') as { seq?: unknown; prev?: unknown };
    if (typeof seq === 'number' && Number.isInteger(seq) && seq > 1 && typeof prev === 'string') return { seq: seq - 1, mac: prev };
  } catch {
    // Not a JSON line: the check names it as line 1.
  }
  return { seq: 0, mac: '' };
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A keyed digest of the params: equal params are recognisable within one record, and guessing them from it takes the secret. */
export function paramsDigest(secret: Uint8Array, operationId: string, params: Params): string {
  return createHmac('sha256', secret)
    .update(`${operationId}\n${canonicalJson(params)}`)
    .digest('base64url')
    .slice(0, 32);
}

const ID_LIKE = /^[\w.:-]{1,64}$/;
/**
 * The most fields a summary names. Operations that pass unknown fields on take any number, and a
 * line listing every one grew with the params (4 MB of short fields, a 4 MB line, of which remote
 * mode keeps 10,000 per key in the shared Redis). The digest still covers them all.
 */
export const SUMMARIZED_FIELDS = 50;
/** Where a summary counts the fields it does not name: no field is named so (field names are letters, digits, _ . -). */
export const MORE_FIELDS = '(more)';
/** Where a summary counts the fields the operation's catalog does not name (see summarizeParams); no field is named so either. */
export const OTHER_FIELDS = '(other fields)';

/**
 * Ids, numbers and switches as they are; free text only as its length; nested values by their shape. The path's fields first.
 * `catalogFields`: the operation's own field names. An operation that passes unknown fields on takes
 * any name the model gives (`Budi.Santoso.0812-3456-7890`), which is the model's text, not ours:
 * given the catalog's names, the summary names those only and counts the others.
 */
export function summarizeParams(params: Params, pathFields: readonly string[], catalogFields?: readonly string[]): Record<string, unknown> {
  const entries = Object.entries(params);
  const named = catalogFields ? entries.filter(([name]) => pathFields.includes(name) || catalogFields.includes(name)) : entries;
  const ordered = [...named.filter(([name]) => pathFields.includes(name)), ...named.filter(([name]) => !pathFields.includes(name))];
  const summary = Object.fromEntries(ordered.slice(0, SUMMARIZED_FIELDS).map(([name, value]) => [name, summaryOf(name, value, pathFields)]));
  const others = entries.length - named.length;
  const more = ordered.length - SUMMARIZED_FIELDS;
  return {
    ...summary,
    ...(others > 0 ? { [OTHER_FIELDS]: `<${others} field${others === 1 ? '' : 's'} the catalog does not name>` } : {}),
    ...(more > 0 ? { [MORE_FIELDS]: `<and ${more} more fields>` } : {}),
  };
}

function summaryOf(name: string, value: unknown, pathFields: readonly string[]): unknown {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'string') return pathFields.includes(name) && ID_LIKE.test(value) ? value : `<text, ${value.length} chars>`;
  if (Array.isArray(value)) return `<list of ${value.length}>`;
  return `<object with ${Object.keys(value as object).length} fields>`;
}
