// Stands in for the SDK's `@modelcontextprotocol/server/_shims` in our bundles (scripts/build.mjs):
// the same exports, with our small schema checker as the default validator instead of ajv, which
// would otherwise be bundled (a third of a server's code) although every server passes its own.
import process from 'node:process';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';
import { smallValidator } from './schema-check.js';

export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    return smallValidator.getValidator<T>(schema);
  }
}

export { process };
