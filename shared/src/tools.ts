// Tool definitions derived from the catalog: input and output schemas, annotations and the one
// description the model reads. Kept short: all fourteen definitions share a ~4,000 token budget.
import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Operation, ToolSpec } from './catalog.js';
import { MAX_LIMIT } from './render.js';

export function hasListOperations(operations: readonly Operation[]): boolean {
  return operations.some((op) => op.list);
}

/** The zod schema of a tool's arguments: validates calls, and is the source of its JSON schema. */
export function argumentsSchema(tool: ToolSpec, operations: readonly Operation[], disabled: ReadonlyMap<string, string>) {
  const ids = operations.map((op) => op.id) as [string, ...string[]];
  const shape: Record<string, z.ZodType> = {
    operationId: z
      .enum(ids, {
        error: (issue) => unknownOperationMessage(issue.input, tool, ids, disabled),
      })
      .describe('Operation to run'),
    params: z.record(z.string(), z.unknown()).optional().describe('As listed'),
  };
  if (tool.kind === 'read' && hasListOperations(operations)) {
    Object.assign(shape, {
      limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`Page size, default 50`),
      offset: z.number().int().min(0).optional().describe('Records to skip'),
      fields: z.array(z.string()).max(50).optional().describe('Fields to keep'),
      search: z.string().max(200).optional().describe('Words to match; field:value for equals'),
    });
  }
  if (tool.kind === 'action') {
    shape.confirmationToken = z.string().max(200).optional().describe('From a preview, once the user agreed');
  }
  return z.strictObject(shape);
}

/** JSON schema for tools/list, without what costs tokens and says nothing ($schema, propertyNames). */
export function toInputJsonSchema(schema: z.ZodType): Tool['inputSchema'] {
  const json = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      // Limits and strictness are enforced when a call is validated; the listing stays lean.
      if (key === '$schema' || key === 'propertyNames' || key === 'maxLength' || key === 'maxItems') continue;
      if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
      if (key === 'additionalProperties' && (value === false || (typeof value === 'object' && value !== null && Object.keys(value).length === 0))) continue;
      out[key] = strip(value);
    }
    return out;
  };
  return strip(json) as Tool['inputSchema'];
}

function unknownOperationMessage(input: unknown, tool: ToolSpec, ids: readonly string[], disabled: ReadonlyMap<string, string>): string {
  const name = typeof input === 'string' ? input : JSON.stringify(input);
  const why = typeof input === 'string' ? disabled.get(input) : undefined;
  if (why) return `operationId ${name} is not available: ${why}. Nothing was sent.`;
  return `operationId ${name} is not an operation of ${tool.name}; use one of ${ids.join(', ')}.`;
}

const NOTES = { type: 'array' };

/** structuredContent of read tools: data (paged for lists: total, matched, offset, returned, nextOffset). */
export const READ_OUTPUT_SCHEMA: Tool['outputSchema'] = {
  type: 'object',
  properties: { operationId: { type: 'string' }, data: {}, page: { type: 'object' }, notes: NOTES },
  required: ['operationId', 'data'],
};

/** structuredContent of action tools: done (with data), preview (with a token), or declined. */
export const ACTION_OUTPUT_SCHEMA: Tool['outputSchema'] = {
  type: 'object',
  properties: {
    operationId: { type: 'string' },
    outcome: { enum: ['done', 'preview', 'declined'] },
    data: {},
    preview: { type: 'string' },
    confirmationToken: { type: 'string' },
    expiresAt: { type: 'string' },
    notes: NOTES,
  },
  required: ['operationId', 'outcome'],
};

export function annotations(tool: ToolSpec, operations: readonly Operation[]) {
  const write = tool.kind === 'action';
  return {
    readOnlyHint: !write,
    destructiveHint: write && operations.some((op) => op.risk === 'destructive'),
    idempotentHint: !write,
    openWorldHint: true,
  };
}

/** The one text the model has about this tool: every operation, its risk, scope and params. */
export function describeTool(tool: ToolSpec, operations: readonly Operation[], gated: (op: Operation) => boolean): string {
  const lines = operations.map((op) => `- ${op.id} [${op.risk}, ${op.scope}]${paramsLine(op)} ${op.summary}${op.list ? ' (list)' : ''}`);
  // Read tools need no preamble (readOnlyHint says it); the line format speaks for itself.
  const head = tool.kind === 'read' ? [] : ['Changes live data:'];
  const tail: string[] = [];
  if (tool.kind === 'action' && operations.some(gated)) {
    tail.push('Gated ones return a preview and confirmationToken: show the user; repeat the call with the token only once they agree.');
  }
  return [...head, ...lines, ...tail].join('\n');
}

function paramsLine(op: Operation): string {
  const signature = paramSignature(op);
  return signature === '' ? '' : ` {${signature}}`;
}

/** `name, msisdn, email?` from the zod schema; `…` where further fields pass through unchanged. */
export function paramSignature(op: Operation): string {
  return signatureOf(op.params);
}

function signatureOf(schema: z.ZodObject): string {
  const fields = Object.entries(schema.shape).map(([key, field]) => {
    const type = field as z.ZodType;
    // Arrays of objects show their items' fields: the model has no other way to learn them.
    const element = type.def.type === 'array' ? (type as unknown as z.ZodArray<z.ZodType>).element : undefined;
    const items = element && element.def.type === 'object' ? `: [{${signatureOf(element as z.ZodObject)}}]` : '';
    return `${key}${type.isOptional() ? '?' : ''}${items}`;
  });
  if (isLoose(schema)) fields.push('…');
  return fields.join(', ');
}

/** The expected shape with each field's description, for validation errors. */
export function paramShape(op: Operation): string {
  const fields = Object.entries(op.params.shape).map(([key, schema]) => {
    const type = schema as z.ZodType;
    return `${key}${type.isOptional() ? '?' : ''}: ${describedAs(type)}`;
  });
  if (isLoose(op.params)) fields.push('…further fields are passed through');
  return `{${fields.join('; ')}}`;
}

/** A field's description; `.optional()` wraps the described schema, so look inside it too. */
function describedAs(schema: z.ZodType): string {
  if (schema.description) return schema.description;
  const inner = (schema as { unwrap?: () => z.ZodType }).unwrap?.();
  return inner ? describedAs(inner) : 'value';
}

function isLoose(schema: z.ZodObject): boolean {
  const catchall = (schema.def as { catchall?: z.ZodType }).catchall;
  return catchall !== undefined && catchall.def.type === 'unknown';
}
