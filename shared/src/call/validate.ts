// Params are checked against the operation's schema before anything is sent; the error names each
// bad field and shows the expected shape. Text a person cannot see is refused in any field.
import type { z } from 'zod';
import type { ToolArguments } from './context.js';
import type { Operation, Params } from '../model/types.js';
import { InputError } from '../model/errors.js';
import { paramShape } from '../model/manifest.js';
import { describeHiddenText, inlineText } from '../safe/sanitize.js';

const MAX_ISSUES = 5;
const MAX_KEYS_LISTED = 10;
/** No operation's params nest deeper than a few levels; deeper input is refused before anything looks at it. */
export const MAX_PARAM_DEPTH = 16;
/**
 * What a field name may be. Operations that pass unknown fields through show every name in the
 * person's question, so a name must not carry line breaks, quotes or characters nobody can see.
 */
const FIELD_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/**
 * Tool arguments (context.ts ToolArguments) that no API field shares: inside params they are the
 * model's mistake, and an operation that passes unknown fields through would send them as data
 * (an idempotencyKey there guards nothing). Refused in any operation's params.
 */
const OUR_ARGUMENTS = ['operationId', 'params', 'confirmationToken', 'idempotencyKey', 'quietHoursOverride'] as const satisfies ReadonlyArray<
  keyof ToolArguments
>;
/** The read tools' list shaping: an API's pass-through body may have such a field, so only named where the schema refuses it. */
const LIST_ARGUMENTS = ['limit', 'offset', 'fields', 'search'] as const satisfies ReadonlyArray<keyof ToolArguments>;
const BESIDE_PARAMS = 'give it beside operationId and params';

/**
 * Validates params with the operation's schema; the error names each bad field and the shape.
 * `hasKey` tells whether a text holds the API key in any form: outgoing text never may (the
 * question would show it redacted while the customer received it whole).
 */
export function validateParams(op: Operation, raw: unknown, hasKey: (text: string) => boolean = () => false): Params {
  const shape = checkShape(raw ?? {}, hasKey);
  if (shape) throw new InputError(`Invalid params for ${op.id}: ${shape}. Nothing was sent.`, op);
  const misplaced = raw && typeof raw === 'object' ? OUR_ARGUMENTS.filter((name) => Object.hasOwn(raw, name)) : [];
  if (misplaced.length > 0) {
    const named = misplaced.map((name) => `params.${name} is an argument of the tool, not a field of ${op.id}: ${BESIDE_PARAMS}`);
    throw new InputError(`Invalid params for ${op.id}: ${named.join('; ')}. Expected params ${paramShape(op)}. Nothing was sent.`, op);
  }
  const result = op.params.safeParse(raw ?? {});
  if (!result.success) {
    const { issues } = result.error;
    const problems = issues.slice(0, MAX_ISSUES).map((issue) => describeIssue(issue, raw, op));
    // Five shown must not read as all of them: the model would fix those and meet the next five.
    if (issues.length > MAX_ISSUES) problems.push(`and ${issues.length - MAX_ISSUES} more problems (fix them all before calling again)`);
    const entries = entriesNamed(issues.slice(0, MAX_ISSUES), raw);
    throw new InputError(`Invalid params for ${op.id}: ${problems.join('; ')}. Expected params ${paramShape(op)}.${entries} Nothing was sent.`, op);
  }
  const hidden = describeHiddenText(result.data);
  if (hidden) throw new InputError(`Invalid params for ${op.id}: ${hidden}. Nothing was sent.`, op);
  return result.data as Params;
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown, op: Operation): string {
  const path = issue.path.length > 0 ? `params.${issue.path.join('.')}` : 'params';
  if (issue.code === 'unrecognized_keys') {
    const more = issue.keys.length > MAX_KEYS_LISTED ? `; and ${issue.keys.length - MAX_KEYS_LISTED} more fields that are not` : '';
    // A field inside a nested object (a contact of an import) is named where it is, and is no list argument of the tool.
    const where = issue.path.length > 0 ? `a field of ${path}` : 'a field of this operation';
    const hint = (key: string) => (issue.path.length > 0 ? '' : listArgumentHint(key) || misspelledParamHint(op, key) || filterHint(op, key));
    const listed = issue.keys.slice(0, MAX_KEYS_LISTED).map((key) => ({ key, hint: hint(key) }));
    // Said once, after them all: the same sentence for each key given was noise.
    const noParams = issue.path.length === 0 && listed.some(({ hint }) => hint === '') ? noParamsHint(op) : '';
    return listed.map(({ key, hint }) => `${path}.${JSON.stringify(key).slice(1, -1).slice(0, 100)} is not ${where}${hint}`).join('; ') + more + noParams;
  }
  let value: unknown = raw;
  for (const key of issue.path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  if (value === undefined && issue.path.length > 0) return `${path} is required`;
  return `${path} ${issue.message.replace(/^Invalid input: /, '')}`;
}

/** How much of an entry's name an error shows: enough to tell rows apart. */
const ENTRY_NAME_CHARS = 60;

/**
 * The entries of a list that the problems name (params.users.28), as a person counts them: from 1,
 * of how many, with the entry's name where it has one. Told "users.28", a model told the person of
 * row 28 of their list, which is row 29, and could not say whose it was without counting.
 */
function entriesNamed(issues: readonly z.core.$ZodIssue[], raw: unknown): string {
  const named = new Map<string, string>();
  for (const { path } of issues) {
    let value: unknown = raw;
    for (const [at, key] of path.entries()) {
      if (Array.isArray(value) && typeof key === 'number' && key < value.length) {
        const where = `params.${path.slice(0, at + 1).join('.')}`;
        const name = (value[key] as { name?: unknown } | null)?.name;
        const shown = typeof name === 'string' && name.trim() !== '' ? ` (${entryName(name)})` : '';
        if (!named.has(where)) named.set(where, `${where} is entry ${key + 1} of ${value.length}${shown}`);
      }
      value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
    }
  }
  return named.size === 0 ? '' : ` Entries are counted from 0: ${[...named.values()].join('; ')}.`;
}

function entryName(name: string): string {
  const characters = Array.from(name);
  return `“${inlineText(characters.slice(0, ENTRY_NAME_CHARS).join(''))}${characters.length > ENTRY_NAME_CHARS ? '…' : ''}”`;
}

const listArgumentHint = (key: string) => ((LIST_ARGUMENTS as readonly string[]).includes(key) ? ` (${key} is an argument of the tool: ${BESIDE_PARAMS})` : '');

/** A field name as a model may misspell it: letter case, and _ . - between words, aside. */
const looseName = (name: string) => name.toLowerCase().replace(/[_.-]/g, '');

/**
 * A field that is one of the operation's own params, misspelled (`campaignId` for `campaignID`):
 * named, before any other hint (the search hint would have the model drop a param it needs).
 */
function misspelledParamHint(op: Operation, key: string): string {
  const shape = (op.params.def as { shape?: Record<string, unknown> }).shape ?? {};
  const meant = Object.keys(shape).find((name) => name !== key && looseName(name) === looseName(key));
  return meant === undefined ? '' : ` (did you mean params.${meant}?)`;
}

/**
 * A list read given a field to filter by (`{tags: "vip"}`): the API's list takes no filter, the
 * tool's search does. Without this the model is told only "Expected params {}" and guesses on.
 * The key passed checkShape's FIELD_NAME, so it is shown as it is.
 */
const filterHint = (op: Operation, key: string) => (op.list ? ` (to filter the list, give search beside params: search "${key}:<value>")` : '');

/**
 * A read that takes no params, given one (campaign.analytics {id}, billing.quota {month}): its answer
 * is the same whatever is given. Told only "Expected params {}", a model dropped the id, read the
 * summary, and gave it to the person as that one campaign's figures.
 */
function noParamsHint(op: Operation): string {
  const shape = (op.params.def as { shape?: Record<string, unknown> }).shape ?? {};
  if (op.risk !== 'safe' || Object.keys(shape).length > 0) return '';
  return ` (${op.id} takes no params: nothing given narrows its answer to one record or period)`;
}

/** Depth, field names and the key, checked without recursion (the input may be hostile). */
function checkShape(raw: unknown, hasKey: (text: string) => boolean): string | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: raw, path: 'params', depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (hasKey(value)) return `${path} contains the API key (or part of it, or an encoding of it), which is never sent to anyone`;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_PARAM_DEPTH) return `${path} nests deeper than ${MAX_PARAM_DEPTH} levels, which no operation takes`;
    for (const [key, inner] of Object.entries(value)) {
      if (!Array.isArray(value) && !FIELD_NAME.test(key)) {
        return `${path} has a field named "${key.slice(0, 40).replace(/[^\x20-\x7e]|"/g, '?')}"${key.length > 40 ? '…' : ''}; field names may hold only letters, digits, _ . and -, up to 64 of them`;
      }
      if (!Array.isArray(value) && hasKey(key)) return `${path} has a field name that contains the API key`;
      // A parsed object holds it as a field, but no copy of it does (it sets the copy's prototype):
      // an operation that passes unknown fields through would drop it unseen, from the preview and the request.
      if (key === '__proto__' && !Array.isArray(value))
        return `${path} has a field named "__proto__", which cannot be passed on to the API (it would be dropped unseen): leave it out`;
      stack.push({ value: inner, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return undefined;
}
