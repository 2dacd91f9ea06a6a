// Stands in for the SDK's `@modelcontextprotocol/server/_shims` in our bundles (scripts/build.mjs):
// the same exports, with the SDK's own cf-worker JSON Schema validator as the default instead of
// ajv, which would otherwise be bundled (a third of a server's code) for keywords we never use.
import process from 'node:process';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';

export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator, process };
