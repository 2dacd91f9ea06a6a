// A small JSON Schema checker for the schemas this project writes itself: tool output schemas and
// the confirmation question's requestedSchema. The SDK's default (ajv) is left out of the bundle:
// it was a third of a server's code and start-up for keywords we never use. A schema with a
// keyword this checker does not know is refused when it is compiled, never silently passed.
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

type Schema = Record<string, unknown>;
const KNOWN = new Set(['type', 'properties', 'required', 'enum', 'items', 'minimum', 'maximum', 'description', 'title', 'default', 'additionalProperties', '$schema']);

const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value);

function assertSupported(schema: Schema, path: string): void {
  for (const key of Object.keys(schema)) if (!KNOWN.has(key)) throw new Error(`schema keyword ${key} at ${path || 'the root'} is not supported`);
  for (const [name, inner] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) assertSupported(inner, `${path}.${name}`);
  if (schema.items && typeof schema.items === 'object') assertSupported(schema.items as Schema, `${path}[]`);
}

function problemsOf(schema: Schema, value: unknown, path: string, out: string[]): void {
  const expected = schema.type;
  if (typeof expected === 'string') {
    const actual = typeOf(value);
    const fits = actual === expected || (expected === 'number' && actual === 'integer');
    if (!fits) {
      out.push(`${path || 'value'} must be ${expected}, not ${actual}`);
      return;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => allowed === value)) out.push(`${path || 'value'} must be one of ${schema.enum.map((allowed) => JSON.stringify(allowed)).join(', ')}`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) out.push(`${path || 'value'} must be at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) out.push(`${path || 'value'} must be at most ${schema.maximum}`);
  }
  if (typeOf(value) === 'object') {
    const record = value as Record<string, unknown>;
    for (const name of (schema.required as string[] | undefined) ?? []) if (record[name] === undefined) out.push(`${path ? `${path}.` : ''}${name} is required`);
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    for (const [name, inner] of Object.entries(record)) {
      const rule = properties[name];
      if (rule) problemsOf(rule, inner, path ? `${path}.${name}` : name, out);
      else if (schema.additionalProperties === false) out.push(`${path ? `${path}.` : ''}${name} is not allowed`);
    }
  }
  if (Array.isArray(value) && schema.items && typeof schema.items === 'object') {
    value.forEach((item, index) => problemsOf(schema.items as Schema, item, `${path}[${index}]`, out));
  }
}

/** Checks a value against a schema: the problems found, at most a few. */
export function checkSchema(schema: JsonSchemaType, value: unknown): string[] {
  const problems: string[] = [];
  problemsOf(schema as Schema, value, '', problems);
  return problems.slice(0, 5);
}

export const smallValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    assertSupported(schema as Schema, ''); // refuses unknown keywords now, not on the first call
    return (input: unknown) => {
      const problems = checkSchema(schema, input);
      return problems.length === 0 ? { valid: true, data: input as T, errorMessage: undefined } : { valid: false, data: undefined, errorMessage: problems.join('; ') };
    };
  },
};
