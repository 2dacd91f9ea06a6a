// @engage-mcp/shared: everything a domain package needs to declare its catalog, and what tests,
// docs and the build use. A domain's stdio entry imports './runtime' instead, which stays lean.
export * from './catalog.js';
export { loadConfig, isOperationEnabled, matchesPattern, DOMAIN_NAMES, type Config, type ConfigResult } from './config.js';
export { createServer, validateParams, SERVER_VERSION, type EngageServer, type ServerOptions } from './server.js';
export { manifestOf, paramSignature, type DomainManifest, type OperationInfo, type ToolInfo } from './manifest.js';
export { SUPPORTED_PROTOCOL_VERSIONS } from './protocol.js';
export { ApiClient } from './http.js';
export { createLogger, redactor, type Logger } from './log.js';
export { InputError, UpstreamError, describeFailure } from './errors.js';
export { buildRequest, fillPath, pathParamNames, routeMatches } from './paths.js';
export { describeTool } from './tools.js';
