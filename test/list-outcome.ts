// What the request helper and readAnswer make of a parsed list body (mirrors api-client.ts's
// envelope check and answers.ts's list shaping), so a streamed read can be compared with the
// whole body's JSON.parse, outcome for outcome.
import type { Redact } from '../shared/src/safe/redact.js';
import { shapeList, type ListShape } from '../shared/src/safe/render.js';
import { StreamedList } from '../shared/src/upstream/stream-list.js';

export type ListOutcome =
  | { kind: 'not-json' }
  | { kind: 'not-envelope' }
  | { kind: 'error'; status: unknown; errorCode: unknown }
  | { kind: 'list'; shaped: unknown }
  | { kind: 'other'; data: unknown };

export function listOutcome(parsed: unknown, shape: ListShape, redact?: Redact): ListOutcome {
  if (parsed === undefined) return { kind: 'not-json' };
  const value = parsed as Record<string, unknown>;
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    !Number.isInteger(value.status) ||
    !Number.isInteger(value.errorCode) ||
    !('data' in value)
  ) {
    return { kind: 'not-envelope' };
  }
  const status = value.status as number;
  if (!(value.errorCode === 0 && status >= 200 && status < 300)) return { kind: 'error', status, errorCode: value.errorCode };
  const { data } = value;
  if (data instanceof StreamedList) return { kind: 'list', shaped: data.shaped() };
  if (Array.isArray(data)) return { kind: 'list', shaped: shapeList(data, shape, '_id', redact ? { redact } : {}) };
  return { kind: 'other', data };
}
