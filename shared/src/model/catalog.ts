// The catalog: each API operation is one declarative entry. Tools, input validation, path
// building, annotations, confirmation previews and the README's tool reference all derive
// from these entries; domain packages contain nothing else.
import { z } from 'zod';
import { inlineText } from '../safe/sanitize.js';
import { pathParamNames } from './paths.js';
import type { Domain, Operation, ToolSpec } from './types.js';

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
    .refine((value) => value !== '.' && value !== '..', 'must be an id, not . or ..')
    .describe(description);
}

export function requiredText(description: string, max = 4096) {
  return z.string({ error: 'expected a string' }).trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).describe(description);
}

export const MSISDN_SHAPE = '62 followed by digits, e.g. 6281234567890 (0812…, +62 812-… are accepted)';

/**
 * The spec requires 62xxxxxxxxxx. Indonesians write numbers as 0812-…, +62 812 …, (0812) …;
 * those are normalised rather than refused. Anything else is refused before it is sent.
 */
export function normalizeMsisdn(input: string): string | undefined {
  const compact = input.trim().replace(/[\s\-.()]/g, '');
  let digits = compact.startsWith('+') ? compact.slice(1) : compact;
  if (!/^\d+$/.test(digits)) return undefined;
  if (digits.startsWith('0')) digits = `62${digits.slice(1)}`;
  else if (digits.startsWith('8')) digits = `62${digits}`;
  return /^62\d{7,13}$/.test(digits) ? digits : undefined;
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

/** A short one-line rendering of untyped data read from the API, for previews (never for outgoing text, which is shown whole). */
export function brief(value: unknown, max = 300): string {
  const text = typeof value === 'string' ? inlineText(value) : JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * A string in “quotes”, whole, on one line: a name or message cannot close its quote or forge a
 * line of the statement (see inlineText). Other values as plain() shows them.
 */
export function quote(value: unknown): string {
  return typeof value === 'string' ? `“${inlineText(value)}”` : plain(value);
}

/** A short value from the API (a status, a channel, a number) on one line, unquoted. */
export function plain(value: unknown): string {
  if (typeof value === 'string') return brief(value, 100);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === undefined || value === null ? 'unknown' : brief(value, 100);
}
