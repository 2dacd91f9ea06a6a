// @engage-mcp/shared: everything a domain package needs to declare its catalog, and what tests,
// docs and the build use. A domain's stdio entry imports './runtime' instead, which stays lean.
export * from './catalog.js';
export { loadConfig, matchesPattern, DOMAIN_NAMES, type Config, type ConfigResult } from './config.js';
export { createServer, type EngageServer, type ServerOptions } from './server.js';
export { validateParams } from './validate.js';
export { Confirmations, MemorySpentStore, canonicalJson, keyFingerprint, type SpentStore } from './confirm.js';
export { manifestOf, paramSignature, type DomainManifest, type OperationInfo, type ToolInfo } from './manifest.js';
export { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
export { createLogger, redactor, type Logger } from './log.js';
export { InputError } from './errors.js';
export { buildRequest } from './paths.js';
export { describeTool } from './tools.js';
// Remote mode (packages/http) builds on these.
export { ApiClient } from './http.js';
export { Pacer, type PaceKeeper } from './pacing.js';
export { registerViews } from './apps.js';
export { SERVER_VERSION } from './server.js';
export { logSafe } from './log.js';
