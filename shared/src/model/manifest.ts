// A domain's manifest: what listing its tools needs, computed from the catalog at build time so a
// server can answer tools/list without loading zod or the catalog (they load on the first call).
// Only zod instances are inspected here; nothing imports zod's runtime.
import type { z } from 'zod';
import type { Domain, Operation, ToolKind } from './types.js';

export interface OperationInfo extends Pick<Operation, 'id' | 'method' | 'path' | 'scope' | 'risk' | 'summary' | 'view'> {
  /** `name, msisdn, email?`: the params as the tool description shows them. */
  signature: string;
  list: boolean;
}

export interface ToolInfo {
  name: string;
  title: string;
  kind: ToolKind;
  operations: OperationInfo[];
}

export interface DomainManifest {
  name: string;
  title: string;
  tools: ToolInfo[];
}

export function manifestOf(domain: Domain): DomainManifest {
  const info = (op: Operation): OperationInfo => ({
    id: op.id,
    method: op.method,
    path: op.path,
    scope: op.scope,
    risk: op.risk,
    summary: op.summary,
    signature: paramSignature(op),
    list: op.list !== undefined,
    ...(op.view ? { view: op.view } : {}),
  });
  return {
    name: domain.name,
    title: domain.title,
    tools: domain.tools.map((tool) => ({ name: tool.name, title: tool.title, kind: tool.kind, operations: tool.operations.map(info) })),
  };
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
