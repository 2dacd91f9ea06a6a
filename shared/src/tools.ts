// Tool definitions derived from the catalog: input and output schemas, annotations and the one
// description the model reads. Kept short: all fourteen definitions share a ~4,000 token budget.
import { z } from 'zod';
import type { Operation, ToolSpec } from './catalog.js';
import { MAX_LIMIT } from './render.js';

export function hasListOperations(operations: readonly Operation[]): boolean {
  return operations.some((op) => op.list);
}

export function inputShape(tool: ToolSpec, operations: readonly Operation[], disabled: ReadonlyMap<string, string>) {
  const ids = operations.map((op) => op.id) as [string, ...string[]];
  const shape: Record<string, z.ZodType> = {
    operationId: z
      .enum(ids, {
        error: (issue) => unknownOperationMessage(issue.input, tool, ids, disabled),
      })
      .describe('The operation to run'),
    params: z.record(z.string(), z.unknown()).optional().describe("The operation's params, as listed"),
  };
  if (tool.kind === 'read' && hasListOperations(operations)) {
    Object.assign(shape, {
      limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`Lists: page size (default 50, max ${MAX_LIMIT})`),
      offset: z.number().int().min(0).max(1_000_000).optional().describe('Lists: records to skip'),
      fields: z.array(z.string()).max(50).optional().describe('Lists: fields to keep (the id always stays)'),
      search: z.string().max(200).optional().describe('Lists: case-insensitive text match'),
      where: z
        .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
        .optional()
        .describe('Lists: field equals value'),
    });
  }
  if (tool.kind === 'action') {
    shape.confirmationToken = z.string().max(200).optional().describe('From a preview, once the user agreed');
  }
  return shape;
}

function unknownOperationMessage(input: unknown, tool: ToolSpec, ids: readonly string[], disabled: ReadonlyMap<string, string>): string {
  const name = typeof input === 'string' ? input : JSON.stringify(input);
  const why = typeof input === 'string' ? disabled.get(input) : undefined;
  if (why) return `operationId ${name} is not available: ${why}. Nothing was sent.`;
  return `operationId ${name} is not an operation of ${tool.name}; use one of ${ids.join(', ')}.`;
}

export const readOutputShape = {
  operationId: z.string(),
  data: z.unknown().describe('The API data, cleaned; lists are paged'),
  page: z
    .object({ total: z.number(), matched: z.number(), offset: z.number(), returned: z.number(), nextOffset: z.number().optional() })
    .optional(),
  notes: z.array(z.string()).optional(),
};

export const actionOutputShape = {
  operationId: z.string(),
  outcome: z.enum(['done', 'preview', 'declined']),
  data: z.unknown().optional(),
  preview: z.string().optional(),
  confirmationToken: z.string().optional(),
  expiresAt: z.string().optional(),
  notes: z.array(z.string()).optional(),
};

export function annotations(tool: ToolSpec, operations: readonly Operation[]) {
  const write = tool.kind === 'action';
  return {
    title: tool.title,
    readOnlyHint: !write,
    destructiveHint: write && operations.some((op) => op.risk === 'destructive'),
    idempotentHint: !write,
    openWorldHint: true,
  };
}

/** The one text the model has about this tool: every operation, its risk, scope and params. */
export function describeTool(tool: ToolSpec, operations: readonly Operation[], gated: (op: Operation) => boolean): string {
  const lines = operations.map((op) => `- ${op.id} [${op.risk}, ${op.scope}]${paramsLine(op)} ${op.summary}${op.list ? ' (list)' : ''}`);
  const head =
    tool.kind === 'read'
      ? `${tool.title}. Read-only. Pass operationId and its params.`
      : `${tool.title}. Changes live data. Pass operationId and its params.`;
  const tail: string[] = [];
  if (tool.kind === 'action' && operations.some(gated)) {
    tail.push('Risky operations first return a preview and a confirmationToken: show the preview to the user; only after they agree, repeat the same call with the token.');
  }
  return [head, ...lines, ...tail].join('\n');
}

function paramsLine(op: Operation): string {
  const signature = paramSignature(op);
  return signature === '' ? '' : ` {${signature}}`;
}

/** `name, msisdn, email?` from the zod schema; `…` where further fields pass through unchanged. */
export function paramSignature(op: Operation): string {
  const fields = Object.entries(op.params.shape).map(([key, schema]) => `${key}${(schema as z.ZodType).isOptional() ? '?' : ''}`);
  if (isLoose(op.params)) fields.push('…');
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
