// What a domain's stdio entry imports. Nothing here loads zod or the catalog: they are loaded on
// the first tool call, so a server starts and lists its tools without them.
export { runStdioServer } from './mcp/stdio.js';
export type { DomainManifest } from './model/manifest.js';
