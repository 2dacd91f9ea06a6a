// @engage-mcp/shared: everything a domain package needs to declare its catalog and run.
export * from './catalog.js';
export { loadConfig, isOperationEnabled, matchesPattern, DOMAIN_NAMES, type Config, type ConfigResult } from './config.js';
export { createServer, validateParams, SERVER_VERSION, type EngageServer, type ServerOptions } from './server.js';
export { runStdioServer } from './stdio.js';
export { ApiClient } from './http.js';
export { createLogger, redactor, type Logger } from './log.js';
export { InputError, UpstreamError, describeFailure } from './errors.js';
export { buildRequest, fillPath, routeMatches } from './paths.js';
export { describeTool, paramSignature } from './tools.js';
