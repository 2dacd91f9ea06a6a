// Params are checked against the operation's schema before anything is sent; the error names each
// bad field and shows the expected shape. Text a person cannot see is refused in any field.
import type { z } from 'zod';
import type { Operation, Params } from './catalog.js';
import { InputError } from './errors.js';
import { paramShape } from './manifest.js';
import { describeHiddenText } from './sanitize.js';

const MAX_ISSUES = 5;
const MAX_KEYS_LISTED = 10;

/** Validates params with the operation's schema; the error names each bad field and the shape. */
export function validateParams(op: Operation, raw: unknown): Params {
  const result = op.params.safeParse(raw ?? {});
  if (!result.success) {
    const problems = result.error.issues.slice(0, MAX_ISSUES).map((issue) => describeIssue(issue, raw));
    throw new InputError(`Invalid params for ${op.id}: ${problems.join('; ')}. Expected params ${paramShape(op)}. Nothing was sent.`, op);
  }
  const hidden = describeHiddenText(result.data);
  if (hidden) throw new InputError(`Invalid params for ${op.id}: ${hidden}. Nothing was sent.`, op);
  return result.data as Params;
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const more = issue.keys.length > MAX_KEYS_LISTED ? `; and ${issue.keys.length - MAX_KEYS_LISTED} more fields that are not` : '';
    return issue.keys.slice(0, MAX_KEYS_LISTED).map((key) => `params.${JSON.stringify(key).slice(1, -1).slice(0, 100)} is not a field of this operation`).join('; ') + more;
  }
  const path = issue.path.length > 0 ? `params.${issue.path.join('.')}` : 'params';
  let value: unknown = raw;
  for (const key of issue.path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  if (value === undefined && issue.path.length > 0) return `${path} is required`;
  return `${path} ${issue.message.replace(/^Invalid input: /, '')}`;
}
