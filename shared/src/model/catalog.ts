// The catalog: each API operation is one declarative entry. Tools, input validation, path
// building, annotations, confirmation previews and the README's tool reference all derive
// from these entries; domain packages contain nothing else.
import { z } from 'zod';
import { escapeQuotes, inlineText } from '../safe/sanitize.js';
import { pathParamNames } from './paths.js';
import type { Domain, Fact, Operation, ToolSpec } from './types.js';

export type * from './types.js';

/**
 * The usual split: `<domain>_read` holds every safe operation, `<domain>_action` every confirm and
 * destructive one, so a host's per-tool approval maps onto risk.
 */
export function defineDomain(name: string, title: string, operations: Operation[]): Domain {
  const safe = operations.filter((op) => op.risk === 'safe');
  const risky = operations.filter((op) => op.risk !== 'safe');
  const tools: ToolSpec[] = [{ name: `${name}_read`, title: `${title}: read`, kind: 'read', operations: safe }];
  if (risky.length > 0) {
    tools.push({ name: `${name}_action`, title: `${title}: change`, kind: 'action', operations: risky });
  }
  return checkDomain({ name, title, operations, tools });
}

/** A domain with no writes splits its reads by shape instead (billing_list / billing_get). */
export function defineReadOnlyDomain(
  name: string,
  title: string,
  operations: Operation[],
  split: Record<string, { title: string; operationIds: string[] }>,
): Domain {
  const tools = Object.entries(split).map(([toolName, { title: toolTitle, operationIds }]) => ({
    name: toolName,
    title: toolTitle,
    kind: 'read' as const,
    operations: operationIds.map((id) => {
      const op = operations.find((candidate) => candidate.id === id);
      if (!op) throw new Error(`catalog ${name}: tool ${toolName} names unknown operation ${id}`);
      return op;
    }),
  }));
  return checkDomain({ name, title, operations, tools });
}

/** Catalog mistakes are programming errors: fail at load, with the reason. */
function checkDomain(domain: Domain): Domain {
  const seen = new Set<string>();
  for (const op of domain.operations) {
    if (seen.has(op.id)) throw new Error(`catalog ${domain.name}: duplicate operation ${op.id}`);
    seen.add(op.id);
    if (!op.id.startsWith(`${domain.name}.`)) throw new Error(`catalog ${domain.name}: ${op.id} is outside the domain`);
    for (const name of pathParamNames(op.path)) {
      if (!(name in op.params.shape)) throw new Error(`catalog ${op.id}: path parameter {${name}} has no schema`);
    }
    if (op.risk !== 'safe' && !op.confirmation) throw new Error(`catalog ${op.id}: a ${op.risk} operation needs a confirmation text`);
    if (op.risk === 'safe' && op.method !== 'GET') throw new Error(`catalog ${op.id}: only GET can be safe`);
  }
  for (const tool of domain.tools) {
    const views = new Set(tool.operations.flatMap((op) => (op.view ? [op.view] : [])));
    if (tool.kind === 'action' && views.size > 0)
      throw new Error(`catalog ${domain.name}: ${tool.name} shows the confirmation card; its operations name no view`);
    if (views.size > 1)
      throw new Error(`catalog ${domain.name}: the operations of ${tool.name} name different views (${[...views].join(', ')}); a tool has one`);
  }
  const inTools = domain.tools.flatMap((tool) => tool.operations.map((op) => op.id));
  if (inTools.length !== domain.operations.length || new Set(inTools).size !== inTools.length) {
    throw new Error(`catalog ${domain.name}: every operation must be in exactly one tool`);
  }
  return domain;
}

// ---- Parameter schemas shared by the catalogs ----------------------------------------------

// Real ids are opaque tokens (ObjectIds, ticket numbers, order ids). Refusing separators,
// whitespace and control characters up front gives the model a clear error instead of a 404
// from some other route; the path builder encodes and checks again regardless.
const ID_PATTERN = /^[^\s/\\?#%\p{Cc}\p{Cf}]+$/u;

export function pathId(description: string) {
  return z
    .string({ error: 'expected a string id' })
    .min(1, 'must not be empty')
    .max(128, 'is longer than any id (128 characters at most)')
    .regex(ID_PATTERN, 'must be a plain id: no spaces, slashes, ?, #, % or control characters')
    .refine((value) => value !== '.' && value !== '..', 'must be an id, not "." or ".."')
    .describe(description);
}

export function requiredText(description: string, max = 4096) {
  return z.string({ error: 'expected a string' }).trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).describe(description);
}

const MSISDN_SHAPE = '62 followed by digits, e.g. 6281234567890 (0812…, +62 812-… are accepted)';

/**
 * The spec requires 62xxxxxxxxxx. Indonesians write numbers as 0812-…, +62 812 …, (0812) …,
 * +62 (0)812 …, 0062 812 …; those are normalised rather than refused. Anything else is refused before it is sent.
 */
export function normalizeMsisdn(input: string): string | undefined {
  const compact = input.trim().replace(/[\s\-.()]/g, '');
  let digits = compact.startsWith('+') ? compact.slice(1) : compact;
  if (!/^\d+$/.test(digits)) return undefined;
  if (digits.startsWith('00'))
    digits = digits.slice(2); // the international prefix: 0062 812… is +62 812…
  else if (digits.startsWith('0')) digits = `62${digits.slice(1)}`;
  else if (digits.startsWith('8')) digits = `62${digits}`;
  // The trunk 0 kept after the country code (+62 (0)812…, 62 0812…) is not dialled: 620812… would
  // pass as "62 followed by digits" and reach a number that does not exist. No number after 62 starts with 0.
  if (digits.startsWith('620')) digits = `62${digits.slice(3)}`;
  return /^62[1-9]\d{6,12}$/.test(digits) ? digits : undefined;
}

export function msisdn(description = 'phone number') {
  return z
    .string({ error: `expected a phone number: ${MSISDN_SHAPE}` })
    .transform((value, ctx) => {
      const normalized = normalizeMsisdn(value);
      if (normalized === undefined) {
        ctx.addIssue({ code: 'custom', message: `is not a valid number: expected ${MSISDN_SHAPE}` });
        return z.NEVER;
      }
      return normalized;
    })
    .describe(`${description} (62…)`);
}

export function email(description = 'email address') {
  return z.email({ error: 'expected an email address such as name@example.com' }).max(254).describe(description);
}

// ---- Preview helpers for catalogs ------------------------------------------------------------

/** Finds the record whose `field` equals `value` in list data of unknown shape. */
export function findRecord(data: unknown, field: string, value: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(data)) return undefined;
  return data.find((item): item is Record<string, unknown> => typeof item === 'object' && item !== null && (item as Record<string, unknown>)[field] === value);
}

/**
 * A preview's fact for a record it cannot show: its look-up failed (`listed` is undefined: no answer, or
 * an error such as the 404 of a record read by id), or the
 * record is not in what the API listed. Said, never left out: nobody agrees to a record unseen, and
 * a yes to this line does not hold once the record reads otherwise (confirm.ts).
 */
export function notShown(what: string, listed: unknown): string {
  return listed === undefined
    ? `${what}: could not be read now (the look-up failed), so it is not shown here. Check it before agreeing.`
    : `${what}: not in what the API lists now (the id may be wrong: check it before asking the user).`;
}

/** A short one-line rendering of untyped data read from the API, for previews (never for outgoing text, which is shown whole). */
export function brief(value: unknown, max = 300): string {
  const json = typeof value === 'string' ? undefined : JSON.stringify(value);
  const text = typeof value === 'string' ? inlineText(value) : json === undefined ? undefined : escapeQuotes(json);
  if (text === undefined) return String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A count read from the API: a whole number from 0 up. A string ("12", "1e9"), a negative number or a fraction is not one. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** `12 recipient(s)`; for what is not a count, `? recipient(s)`, and what the API gave instead (quoted), never as if it were the count. */
export function countOf(value: unknown, what: string): string {
  if (isCount(value)) return `${value} ${what}`;
  if (value === undefined || value === null) return `? ${what}`;
  return `? ${what} (the API gave ${typeof value === 'string' ? `“${brief(value, 100)}”` : plain(value)}, which is not a count)`;
}

/** A fact shown in a preview but not bound to the yes: it changes on its own (the quota, a count so far). */
export function live(text: string): Fact {
  return { text, bound: '' };
}

/**
 * Untyped data read from the API (an allowance, a set of counts) as a person reads it at a glance:
 * field names as words, numbers with thousands separators, and an allowance with a total and what
 * is used or remaining as "7,650 of 10,000 left (2,350 used)". Two levels of objects at most, and
 * field names of letters and digits (quoted unless made of a quota's words, see fieldWords);
 * anything else, or a text past `max` characters, as brief() shows it.
 */
export function inWords(value: unknown, max = 300): string {
  const text = wordsOf(value, 0);
  return text !== undefined && text.length <= max ? text : brief(value, max);
}

/** The words a quota's or an allowance's field names are made of, shown as words; any other name is quoted. */
const QUOTA_WORDS = new Set(
  (
    'ai api sms whatsapp email emails telegram message messages quota quotas credit credits balance plan tier active ' +
    'total used remaining left available limit limits max allowed count amount unit units token tokens request requests ' +
    'conversation conversations template templates contact contacts campaign campaigns broadcast broadcasts ' +
    'monthly daily weekly yearly per month day week year period cycle billing start end starts ends reset resets ' +
    'renew renews renewal expires expiry at on date currency overage id name note notes status type'
  ).split(' '),
);
const INITIALISMS = new Set(['ai', 'api', 'id', 'sms', 'url', 'whatsapp']);

function wordsOf(value: unknown, depth: number): string | undefined {
  if (typeof value === 'number') return value.toLocaleString('en-US');
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return plain(value);
  if (typeof value !== 'object' || Array.isArray(value) || depth > 1) return undefined;
  const record = value as Record<string, unknown>;
  const allowance = allowanceOf(record);
  const parts = allowance ? [allowance.text] : [];
  for (const [key, inner] of Object.entries(record)) {
    if (allowance?.keys.includes(key)) continue;
    const name = fieldWords(key);
    const shown = wordsOf(inner, depth + 1);
    if (name === undefined || shown === undefined) return undefined;
    parts.push(`${name}: ${shown}`);
  }
  return parts.length === 0 ? undefined : parts.join(depth === 0 ? '; ' : ', ');
}

/** `{total, used, remaining}` (any two, as numbers) in words, and the fields that says. */
function allowanceOf(record: Record<string, unknown>): { text: string; keys: string[] } | undefined {
  const number = (key: string) => (typeof record[key] === 'number' && Number.isFinite(record[key]) ? (record[key] as number) : undefined);
  const [total, used, remaining] = [number('total'), number('used'), number('remaining')];
  const shown = (amount: number) => amount.toLocaleString('en-US');
  if (total === undefined || (used === undefined && remaining === undefined)) return undefined;
  if (remaining === undefined) return { text: `${shown(used as number)} of ${shown(total)} used`, keys: ['total', 'used'] };
  const usedText = used === undefined ? '' : ` (${shown(used)} used)`;
  return { text: `${shown(remaining)} of ${shown(total)} left${usedText}`, keys: ['total', 'used', 'remaining'] };
}

/**
 * `aiQuota` → `AI quota`, `message_quota` → `message quota`: a name made of words a quota is told
 * in. Any other name of plain letters and digits is shown as given, in quotes: `“agreed_by_user”`
 * unquoted could read as the statement's own words. Undefined for a name that is not plain.
 */
function fieldWords(key: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_]{0,39}$/.test(key)) return undefined;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[_ ]+/)
    .filter((word) => word !== '')
    .map((word) => word.toLowerCase());
  if (!words.every((word) => QUOTA_WORDS.has(word))) return `“${key}”`;
  return words.map((word) => (INITIALISMS.has(word) ? (word === 'whatsapp' ? 'WhatsApp' : word.toUpperCase()) : word)).join(' ');
}

/**
 * A string in “quotes”, whole, on one line: a name or message cannot close its quote or forge a
 * line of the statement (see inlineText). Other values as plain() shows them.
 */
export function quote(value: unknown): string {
  return typeof value === 'string' ? `“${inlineText(value)}”` : plain(value);
}

/** What a person reads as one value (a status, a channel, an id, a number): shown unquoted. Any other text could read as our own words. */
const WORD = /^[A-Za-z0-9_.:@+/-]{1,64}$/;

/** How much of a name read from the API a statement shows: more than any name this server itself accepts (200). */
const MAX_NAME_CHARS = 300;

/**
 * A name read from the API (a campaign's, a customer's) in “quotes” on one line, cut after
 * MAX_NAME_CHARS characters and said so: a name is not sent anywhere, and whole it could push the
 * facts after it out of view, or the statement past what can be shown. Outgoing text uses quote().
 */
export function quoteName(value: unknown): string {
  if (typeof value !== 'string') return quote(value);
  const characters = Array.from(value);
  if (characters.length <= MAX_NAME_CHARS) return quote(value);
  return `“${inlineText(characters.slice(0, MAX_NAME_CHARS).join(''))}…” (cut: ${characters.length.toLocaleString('en-US')} characters in all)`;
}

/**
 * A fact whose line quotes names read from the API (`name` quotes one): shown with each name as
 * quoteName() shows it, bound to the names whole, so a change past the cut still undoes a yes.
 */
export function withNames(line: (name: (value: unknown) => string) => string): Fact {
  const text = line(quoteName);
  const bound = line(quote);
  return text === bound ? text : { text, bound };
}

/**
 * A short value from the API (a status, a channel, a number) on one line: a word as it is, any
 * other text quoted (cut at 100 characters), so that it cannot read as the statement's own words.
 * A list or an object is quoted too (its JSON): the card and the question isolate what is quoted,
 * so right-to-left letters in it cannot pull the count after it inside (`status ["שלום"], 12`).
 */
export function plain(value: unknown): string {
  if (typeof value === 'string') return WORD.test(value) ? value : `“${brief(value, 100)}”`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === undefined || value === null ? 'unknown' : `“${brief(value, 100)}”`;
}
